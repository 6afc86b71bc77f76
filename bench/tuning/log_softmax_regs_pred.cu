// y = log_softmax(x) over each row   reference: gpugrad/kernels.py log_softmax
// y = (x - m) - log(sum(exp(x - m))) with m the row's max. x: (rows, cols) contiguous,
// n = rows * cols elements. One warp per row (grid-stride over rows), reduced with warp
// shuffles. A row of up to 32 * kRegs values is read once and kept in registers; a longer row
// is read three times (max, sum, write), the later reads mostly from cache.

constexpr int kRegs = 32;

template <typename T>
__device__ __forceinline__ T minus_inf();
template <>
__device__ __forceinline__ float minus_inf<float>() { return __uint_as_float(0xff800000u); }
template <>
__device__ __forceinline__ double minus_inf<double>() {
  return __longlong_as_double((long long)0xfff0000000000000ULL);
}

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
  const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  // every lane of a warp takes the same rows, so the shuffles see all 32 lanes
  if (cols <= 32 * kRegs) {
    for (long long r = first; r < rows; r += warps) {
      const T* xr = x + r * cols;
      T v[kRegs];
      // every load is issued before any is used: kRegs loads in flight per lane
#pragma unroll
      for (int k = 0; k < kRegs; ++k) {
        const long long j = lane + 32LL * k;
        v[k] = j < cols ? xr[j] : minus_inf<T>();
      }
      T m = v[0];
#pragma unroll
      for (int k = 1; k < kRegs; ++k) m = max(m, v[k]);
      m = warp_max(m);
      T s = T(0);
#pragma unroll
      for (int k = 0; k < kRegs; ++k) {
        if (lane + 32LL * k < cols) s += exp(v[k] - m);
      }
      const T log_s = log(warp_sum(s));
      T* yr = y + r * cols;
#pragma unroll
      for (int k = 0; k < kRegs; ++k) {
        const long long j = lane + 32LL * k;
        if (j < cols) yr[j] = (v[k] - m) - log_s;
      }
    }
    return;
  }
  for (long long r = first; r < rows; r += warps) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T m = minus_inf<T>();
    for (long long j = lane; j < cols; j += 32) m = max(m, xr[j]);
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
