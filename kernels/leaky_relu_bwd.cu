// gx = gy where x > 0 else slope * gy   reference: gpugrad/kernels.py leaky_relu_bwd
// Arrays contiguous, n elements; slope arrives as double and is rounded to T once, like the
// reference's gy.dtype.type(slope).
// gy_stride: 1 when gy holds one value per element, 0 when it holds one value for all
// (the gradient of a sum, expanded without a copy).

template <typename T>
__device__ __forceinline__ void leaky_relu_bwd(const T* __restrict__ x, const T* __restrict__ gy,
                                               T* __restrict__ gx, double slope,
                                               long long gy_stride, long long n) {
  const T s = T(slope);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    // NOTE: x == 0 takes the slope branch, as in PyTorch.
    gx[i] = x[i] > T(0) ? gy[i * gy_stride] : gy[i * gy_stride] * s;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void leaky_relu_bwd_float(const float* x, const float* gy, float* gx,
                                                double slope, long long gy_stride, long long n) {
  leaky_relu_bwd(x, gy, gx, slope, gy_stride, n);
}

extern "C" __global__ void leaky_relu_bwd_double(const double* x, const double* gy, double* gx,
                                                 double slope, long long gy_stride, long long n) {
  leaky_relu_bwd(x, gy, gx, slope, gy_stride, n);
}
