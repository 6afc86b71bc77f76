// y = log_softmax(x) over each row   reference: gpugrad/kernels.py log_softmax
// y = (x - m) - log(sum(exp(x - m))) with m the row's max.
// x: (rows, cols) contiguous, n = rows * cols elements. One warp per row (grid-stride over
// rows): the row's max and sum are reduced with warp shuffles, so a row costs one launch and
// three reads of the row instead of the six elementwise and reduction ops of the formula.

template <typename T>
__device__ __forceinline__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

template <typename T>
__device__ __forceinline__ void log_softmax(const T* __restrict__ x, T* __restrict__ y,
                                            long long cols, long long n) {
  const long long rows = n / cols;   // the launcher skips n == 0, so cols > 0
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  // every lane of a warp takes the same rows, so the shuffles see all 32 lanes
  for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows;
       r += warps) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T m = xr[lane < cols ? lane : 0];
    for (long long j = lane + 32; j < cols; j += 32) m = max(m, xr[j]);
    m = warp_max(m);
    T s = T(0);
    for (long long j = lane; j < cols; j += 32) s += exp(xr[j] - m);
    const T log_s = log(warp_sum(s));
    for (long long j = lane; j < cols; j += 32) yr[j] = (xr[j] - m) - log_s;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void log_softmax_float(const float* x, float* y, long long cols,
                                             long long n) {
  log_softmax(x, y, cols, n);
}

extern "C" __global__ void log_softmax_double(const double* x, double* y, long long cols,
                                              long long n) {
  log_softmax(x, y, cols, n);
}
