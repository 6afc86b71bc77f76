// gx = scale * 2 * (x - target) * gy   reference: gpugrad/kernels.py mse_bwd
// x and target contiguous with n elements. gy is either one value (gy_stride = 0: the 0-d
// gradient of a 'mean'/'sum' loss, read without materialising a broadcast copy) or n values
// (gy_stride = 1: reduction 'none'). scale = 1/N for 'mean', 1 otherwise.

template <typename T>
__device__ __forceinline__ void mse_bwd(const T* __restrict__ x, const T* __restrict__ target,
                                        const T* __restrict__ gy, T* __restrict__ gx,
                                        double scale, long long gy_stride, long long n) {
  const T c = T(2 * scale);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    gx[i] = (x[i] - target[i]) * (gy[i * gy_stride] * c);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void mse_bwd_float(const float* x, const float* target, const float* gy,
                                         float* gx, double scale, long long gy_stride,
                                         long long n) {
  mse_bwd(x, target, gy, gx, scale, gy_stride, n);
}

extern "C" __global__ void mse_bwd_double(const double* x, const double* target,
                                          const double* gy, double* gx, double scale,
                                          long long gy_stride, long long n) {
  mse_bwd(x, target, gy, gx, scale, gy_stride, n);
}
