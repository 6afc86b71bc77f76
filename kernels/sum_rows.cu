// out_col[j] = sum over i of x[i, j]   reference: gpugrad/kernels.py sum_rows
// The gradient of a bias broadcast over the rows (Linear's, and any leading-axes sum of a
// contiguous gradient). x is (rows, cols), contiguous, n = rows * cols elements, n > 0.
// A block covers 32 columns with 8 lanes of rows: each warp reads 32 consecutive columns of
// one row (coalesced), each lane sums every 8th row in double, and lane 0 adds the 8 partial
// sums from shared memory. Grid-stride over column tiles; a launch of 256 threads per block.
// One launch through gpugrad's launcher where CuPy's reduction costs several times its host
// time on a launch-bound step.

template <typename T>
__device__ __forceinline__ void sum_rows(const T* __restrict__ x, T* __restrict__ out_col,
                                         long long n, long long cols) {
  __shared__ double part[8][33];   // 33: lanes of one column in different banks
  const int tx = threadIdx.x & 31;
  const int ty = threadIdx.x >> 5;  // 0..7 with 256 threads
  const long long rows = n / cols;
  for (long long c0 = (long long)blockIdx.x * 32; c0 < cols; c0 += (long long)gridDim.x * 32) {
    const long long j = c0 + tx;
    double acc = 0;
    if (j < cols) {
#pragma unroll 4
      for (long long i = ty; i < rows; i += 8) acc += (double)x[i * cols + j];
    }
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && j < cols) {
      double s = 0;
      for (int r = 0; r < 8; ++r) s += part[r][tx];
      out_col[j] = T(s);
    }
    __syncthreads();
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void sum_rows_float(const float* x, float* out_col, long long n,
                                          long long cols) {
  sum_rows(x, out_col, n, cols);
}

extern "C" __global__ void sum_rows_double(const double* x, double* out_col, long long n,
                                           long long cols) {
  sum_rows(x, out_col, n, cols);
}
