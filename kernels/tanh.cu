// out = tanh(x)   reference: gpugrad/kernels.py tanh
// The forward of tanh in one pass, without CuPy's general ufunc dispatch.

template <typename T>
__device__ __forceinline__ void tanh(const T* __restrict__ x,
    T* __restrict__ out, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = tanh(x[i]);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void tanh_float(const float* x, float* out, long long n) {
  tanh(x, out, n);
}

extern "C" __global__ void tanh_double(const double* x, double* out, long long n) {
  tanh(x, out, n);
}
