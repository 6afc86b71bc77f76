// gx = gy * s * (1 + x * (1 - s)),  s = sigmoid(x)   reference: gpugrad/kernels.py silu_bwd
// s is computed as tanh(x / 2) / 2 + 1 / 2, which cannot overflow for large |x| (exp would);
// arrays contiguous, n elements.
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void silu_bwd(const T* __restrict__ x, const T* __restrict__ gy,
                                         T* __restrict__ gx, long long gy_stride, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T xi = x[i];
    const T s = T(0.5) * tanh(T(0.5) * xi) + T(0.5);
    gx[i] = gy[i * gy_stride] * s * (T(1) + xi * (T(1) - s));
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void silu_bwd_float(const float* x, const float* gy, float* gx,
                                          long long gy_stride, long long n) {
  silu_bwd(x, gy, gx, gy_stride, n);
}

extern "C" __global__ void silu_bwd_double(const double* x, const double* gy, double* gx,
                                           long long gy_stride, long long n) {
  silu_bwd(x, gy, gx, gy_stride, n);
}
