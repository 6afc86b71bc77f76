// gx = gz / y,  gy = -gz * x / y^2   reference: gpugrad/kernels.py div_bwd
// Both from one reciprocal r = 1 / y: gx = gz r, gy = -gx x r (within an ulp of the divisions);
// arrays contiguous, n elements.
// gz_stride: 1 when gz holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void div_bwd(const T* __restrict__ x, const T* __restrict__ y,
                                        const T* __restrict__ gz, T* __restrict__ gx,
                                        T* __restrict__ gy, long long gz_stride, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T r = T(1) / y[i];   // one division, where gz / y and then / y made two
    const T q = gz[i * gz_stride] * r;
    gx[i] = q;
    gy[i] = -q * x[i] * r;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void div_bwd_float(const float* x, const float* y, const float* gz,
                                         float* gx, float* gy, long long gz_stride, long long n) {
  div_bwd(x, y, gz, gx, gy, gz_stride, n);
}

extern "C" __global__ void div_bwd_double(const double* x, const double* y, const double* gz,
                                          double* gx, double* gy,
                                          long long gz_stride, long long n) {
  div_bwd(x, y, gz, gx, gy, gz_stride, n);
}
