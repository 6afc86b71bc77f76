// out = x * y   reference: gpugrad/kernels.py mul
// Two arrays of one shape and dtype, contiguous: the forward of `a * b` without CuPy's
// general ufunc dispatch (gpugrad/kernels.py lean_binary decides when it applies).

template <typename T>
__device__ __forceinline__ void mul(const T* __restrict__ x, const T* __restrict__ y,
    T* __restrict__ out, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = x[i] * y[i];
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void mul_float(const float* x, const float* y, float* out, long long n) {
  mul(x, y, out, n);
}

extern "C" __global__ void mul_double(const double* x, const double* y, double* out, long long n) {
  mul(x, y, out, n);
}
