// out = max(x, 0), NaN kept   reference: gpugrad/kernels.py relu
// The forward of relu in one pass; a NaN stays NaN, as numpy's maximum and PyTorch's relu
// give it.

template <typename T>
__device__ __forceinline__ void relu(const T* __restrict__ x,
    T* __restrict__ out, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T v = x[i];
    out[i] = (v > T(0) || v != v) ? v : T(0);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void relu_float(const float* x, float* out, long long n) {
  relu(x, out, n);
}

extern "C" __global__ void relu_double(const double* x, double* out, long long n) {
  relu(x, out, n);
}
