// gx = gy * (Phi(x) + x phi(x)), or its tanh form   reference: gpugrad/kernels.py gelu_bwd
// Exact:  Phi(x) = (1 + erf(x / sqrt 2)) / 2,  phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
// Tanh:   th = tanh(k (x + c x^3)),  k = sqrt(2 / pi),  c = 0.044715,
//         gx = gy * ((1 + th) / 2 + x (1 - th^2) k (1 + 3 c x^2) / 2).
// Arrays contiguous, n elements; erf, exp and tanh are the CUDA device builtins.
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void gelu_bwd(const T* __restrict__ x, const T* __restrict__ gy,
                                         T* __restrict__ gx, int tanh_approx,
                                         long long gy_stride, long long n) {
  const T k = T(0.7978845608028654);          // sqrt(2 / pi)
  const T c = T(0.044715);
  const T c3 = T(3 * 0.044715);
  const T inv_sqrt2 = T(0.7071067811865475);
  const T inv_sqrt2pi = T(0.3989422804014327);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T xi = x[i];
    T d;
    if (tanh_approx) {
      const T th = tanh(k * (xi + c * xi * xi * xi));
      d = T(0.5) * (T(1) + th) + T(0.5) * xi * (T(1) - th * th) * k * (T(1) + c3 * xi * xi);
    } else {
      const T cdf = T(0.5) * (T(1) + erf(xi * inv_sqrt2));
      const T pdf = exp(T(-0.5) * xi * xi) * inv_sqrt2pi;
      d = cdf + xi * pdf;
    }
    gx[i] = gy[i * gy_stride] * d;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void gelu_bwd_float(const float* x, const float* gy, float* gx,
                                          int tanh_approx, long long gy_stride, long long n) {
  gelu_bwd(x, gy, gx, tanh_approx, gy_stride, n);
}

extern "C" __global__ void gelu_bwd_double(const double* x, const double* gy, double* gx,
                                           int tanh_approx, long long gy_stride, long long n) {
  gelu_bwd(x, gy, gx, tanh_approx, gy_stride, n);
}
