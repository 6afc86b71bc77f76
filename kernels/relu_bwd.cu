// gx = 0 where y == 0 else gy   reference: gpugrad/kernels.py relu_bwd
// y is the saved output relu(x) (y > 0 exactly where x > 0); arrays contiguous, n elements.
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void relu_bwd(const T* __restrict__ y, const T* __restrict__ gy,
                                         T* __restrict__ gx, long long gy_stride, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    // NOTE: y = relu(x) is > 0, 0 or NaN; the gradient is 0 at 0 and gy at NaN, as in PyTorch.
    gx[i] = y[i] != T(0) ? gy[i * gy_stride] : T(0);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void relu_bwd_float(const float* y, const float* gy, float* gx,
                                          long long gy_stride, long long n) {
  relu_bwd(y, gy, gx, gy_stride, n);
}

extern "C" __global__ void relu_bwd_double(const double* y, const double* gy, double* gx,
                                           long long gy_stride, long long n) {
  relu_bwd(y, gy, gx, gy_stride, n);
}
