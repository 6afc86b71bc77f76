// gx = gz * y,  gy = gz * x   reference: gpugrad/kernels.py mul_bwd
// One pass reads x, y, gz once and writes both gradients; arrays contiguous, n elements
// (the caller sums broadcast dimensions away afterwards).
// gz_stride: 1 when gz holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void mul_bwd(const T* __restrict__ x, const T* __restrict__ y,
                                        const T* __restrict__ gz, T* __restrict__ gx,
                                        T* __restrict__ gy, long long gz_stride, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T g = gz[i * gz_stride];
    gx[i] = g * y[i];
    gy[i] = g * x[i];
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void mul_bwd_float(const float* x, const float* y, const float* gz,
                                         float* gx, float* gy, long long gz_stride, long long n) {
  mul_bwd(x, y, gz, gx, gy, gz_stride, n);
}

extern "C" __global__ void mul_bwd_double(const double* x, const double* y, const double* gz,
                                          double* gx, double* gy,
                                          long long gz_stride, long long n) {
  mul_bwd(x, y, gz, gx, gy, gz_stride, n);
}
