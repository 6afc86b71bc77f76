// dst += src   reference: gpugrad/kernels.py accumulate_grad
// In place on dst; src already cast to dst's dtype and broadcast by the launcher; both
// contiguous, n elements. No __restrict__: dst and src may be the same buffer (g += g).

template <typename T>
__device__ __forceinline__ void accumulate_grad(T* dst, const T* src, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] += src[i];
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void accumulate_grad_float(float* dst, const float* src, long long n) {
  accumulate_grad(dst, src, n);
}

extern "C" __global__ void accumulate_grad_double(double* dst, const double* src, long long n) {
  accumulate_grad(dst, src, n);
}
