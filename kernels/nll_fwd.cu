// per-row negative log-likelihood and weight   reference: gpugrad/kernels.py nll_fwd
// loss_row[i] = -w_i * x[i, t_i] and w_row[i] = w_i, with w_i = 0 where t_i == ignore_index,
// else weight_col[t_i] (1 when weight_col is null). x: (rows, cols) contiguous, n = rows * cols;
// target: int64 (rows,). A target outside [0, cols) that is not ignore_index gives NaN in both
// outputs, so the loss is NaN: the reference raises IndexError, which a kernel cannot do
// without a device sync per step. One thread per row.

template <typename T>
__device__ __forceinline__ T quiet_nan();
template <>
__device__ __forceinline__ float quiet_nan<float>() { return __int_as_float(0x7fc00000); }
template <>
__device__ __forceinline__ double quiet_nan<double>() {
  return __longlong_as_double(0x7ff8000000000000LL);
}

template <typename T>
__device__ __forceinline__ void nll_fwd(const T* __restrict__ x,
                                        const long long* __restrict__ target,
                                        const T* __restrict__ weight_col,
                                        T* __restrict__ loss_row, T* __restrict__ w_row,
                                        long long ignore_index, long long cols, long long n) {
  const long long rows = n / cols;   // the launcher skips n == 0, so cols > 0
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
    const long long t = target[r];
    T w = T(0);
    T loss = T(0);
    if (t != ignore_index) {
      if (t < 0 || t >= cols) {
        w = loss = quiet_nan<T>();
      } else {
        w = weight_col ? weight_col[t] : T(1);
        loss = -w * x[r * cols + t];
      }
    }
    loss_row[r] = loss;
    w_row[r] = w;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void nll_fwd_float(const float* x, const long long* target,
                                         const float* weight_col, float* loss_row,
                                         float* w_row, long long ignore_index, long long cols,
                                         long long n) {
  nll_fwd(x, target, weight_col, loss_row, w_row, ignore_index, cols, n);
}

extern "C" __global__ void nll_fwd_double(const double* x, const long long* target,
                                          const double* weight_col, double* loss_row,
                                          double* w_row, long long ignore_index, long long cols,
                                          long long n) {
  nll_fwd(x, target, weight_col, loss_row, w_row, ignore_index, cols, n);
}
