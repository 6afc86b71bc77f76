// gx = gy * p * x^(p - 1)   reference: gpugrad/kernels.py pow_bwd
// p is a number (double); p and p - 1 are rounded to T once, like the reference's t(p), t(p - 1).
// A negative base with an integral exponent is well defined (C pow semantics), as in numpy.
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void pow_bwd(const T* __restrict__ x, const T* __restrict__ gy,
                                        T* __restrict__ gx, double p,
                                        long long gy_stride, long long n) {
  const T tp = T(p);
  const T tq = T(p - 1);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    gx[i] = gy[i * gy_stride] * (tp * pow(x[i], tq));
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
