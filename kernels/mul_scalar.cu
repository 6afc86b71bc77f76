// out = x * s   reference: gpugrad/kernels.py mul_scalar
// A contiguous array and a Python number, which is rounded to T first as the array's own
// arithmetic rounds it (`x * 1.01`).

template <typename T>
__device__ __forceinline__ void mul_scalar(const T* __restrict__ x, double s,
    T* __restrict__ out, long long n) {
  const T ts = T(s);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = x[i] * ts;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void mul_scalar_float(const float* x, double s, float* out, long long n) {
  mul_scalar(x, s, out, n);
}

extern "C" __global__ void mul_scalar_double(const double* x, double s, double* out, long long n) {
  mul_scalar(x, s, out, n);
}
