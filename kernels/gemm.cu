// out = a @ b   reference: gpugrad/kernels.py gemm
// a: (m, k) and b: (k, n), each read through its element strides (a_row, a_col, b_row, b_col),
// so a transposed view is read where it lies; out: (m, n), contiguous. One thread per output
// element (a grid-stride loop over m * n), the sum over k formed in T, as cuBLAS's default.
// gpugrad launches it where CuPy's matmul cannot run: CuPy refuses cuBLAS while a stream is
// capturing a CUDA graph, so the products of a captured step run here. Written for the small
// products of toy models (consecutive threads read consecutive columns of b); the large ones
// belong to cuBLAS.

template <typename T>
__device__ __forceinline__ void gemm(const T* __restrict__ a, const T* __restrict__ b,
                                     T* __restrict__ out, long long m, long long n, long long k,
                                     long long a_row, long long a_col, long long b_row,
                                     long long b_col) {
  const long long total = m * n;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long r = i / n;
    const long long c = i - r * n;
    const T* ar = a + r * a_row;
    const T* bc = b + c * b_col;
    T acc = T(0);
    for (long long j = 0; j < k; ++j) acc += ar[j * a_col] * bc[j * b_row];
    out[i] = acc;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py bind_gemm fills them.
extern "C" __global__ void gemm_float(const float* a, const float* b, float* out, long long m,
                                      long long n, long long k, long long a_row, long long a_col,
                                      long long b_row, long long b_col) {
  gemm(a, b, out, m, n, k, a_row, a_col, b_row, b_col);
}

extern "C" __global__ void gemm_double(const double* a, const double* b, double* out,
                                       long long m, long long n, long long k, long long a_row,
                                       long long a_col, long long b_row, long long b_col) {
  gemm(a, b, out, m, n, k, a_row, a_col, b_row, b_col);
}
