// y = 1 / (1 + exp(-x))   reference: gpugrad/kernels.py sigmoid
// Computed as 0.5 * tanh(x / 2) + 0.5, which neither overflows nor loses the small values at
// large |x|; one pass instead of the four elementwise ops of that formula. Arrays contiguous.

template <typename T>
__device__ __forceinline__ void sigmoid(const T* __restrict__ x, T* __restrict__ y,
                                        long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = T(0.5) * tanh(T(0.5) * x[i]) + T(0.5);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void sigmoid_float(const float* x, float* y, long long n) {
  sigmoid(x, y, n);
}

extern "C" __global__ void sigmoid_double(const double* x, double* y, long long n) {
  sigmoid(x, y, n);
}
