// gx = gy * p * x^(p - 1)   reference: gpugrad/kernels.py pow_bwd
// p is a number (double); p and p - 1 are rounded to T once, like the reference's t(p), t(p - 1);
// an integral p - 1 (|p - 1| <= 16) is raised by multiplication, not pow.
// A negative base with an integral exponent is well defined (C pow semantics), as in numpy.
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

// x^q for an integral q by repeated squaring: |q| <= 2 is exact, like pow; beyond, within an
// ulp or two of it, for a few multiplies instead of pow's logarithm and exponential.
template <typename T>
__device__ __forceinline__ T int_pow(T x, int q) {
  T r = T(1);
  T b = x;
  for (int e = q < 0 ? -q : q; e; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return q < 0 ? T(1) / r : r;
}

template <typename T>
__device__ __forceinline__ void pow_bwd(const T* __restrict__ x, const T* __restrict__ gy,
                                        T* __restrict__ gx, double p,
                                        long long gy_stride, long long n) {
  const T tp = T(p);
  const T tq = T(p - 1);
  // the common exponents (x^2, x^3, 1/x ...) are integral: one branch, the same for all threads
  const bool integral = (p - 1) == floor(p - 1) && fabs(p - 1) <= 16;
  const int iq = integral ? (int)(p - 1) : 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T xq = integral ? int_pow(x[i], iq) : pow(x[i], tq);
    gx[i] = gy[i * gy_stride] * (tp * xq);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void pow_bwd_float(const float* x, const float* gy, float* gx, double p,
                                         long long gy_stride, long long n) {
  pow_bwd(x, gy, gx, p, gy_stride, n);
}

extern "C" __global__ void pow_bwd_double(const double* x, const double* gy, double* gx,
                                          double p, long long gy_stride, long long n) {
  pow_bwd(x, gy, gx, p, gy_stride, n);
}
