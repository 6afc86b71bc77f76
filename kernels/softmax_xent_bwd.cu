// gx = (exp(logp) - onehot(target)) * gy * scale   reference: gpugrad/kernels.py softmax_xent_bwd
// logp: (N, C) log-softmax, contiguous, n = N * C elements, cols = C. target: int64 (N,); rows
// with target < 0 are ignored (gradient 0); a target >= C matches no column (the reference
// raises IndexError instead; the caller validates). gy: one value (gy_stride = 0, 'mean'/'sum')
// or one per row (gy_stride = 1, 'none'). scale = 1 / (number of counted rows) for 'mean'.

template <typename T>
__device__ __forceinline__ void softmax_xent_bwd(const T* __restrict__ logp,
                                                 const long long* __restrict__ target,
                                                 const T* __restrict__ gy, T* __restrict__ gx,
                                                 double scale, long long gy_stride,
                                                 long long cols, long long n) {
  const T s = T(scale);
  // NOTE: each element needs its row. Dividing per element (64-bit) costs more than the
  // memory traffic; instead each thread divides once, for its first element and for the
  // grid stride, then steps (row, col) along with i: a stride is dr rows and dc < cols columns,
  // so one carry keeps col in [0, cols).
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long row = i / cols, col = i - row * cols;
  const long long dr = stride / cols, dc = stride - dr * cols;
  for (; i < n; i += stride) {
    // Both loads issue before anything depends on them; an ignored row (target < 0) is
    // selected away at the end instead of branched around.
    const T lp = logp[i];
    const long long t = target[row];
    const T g = (exp(lp) - (col == t ? T(1) : T(0))) * (gy[gy_stride ? row : 0] * s);
    gx[i] = t < 0 ? T(0) : g;
    col += dc;
    row += dr;
    if (col >= cols) {
      col -= cols;
      ++row;
    }
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void softmax_xent_bwd_float(const float* logp, const long long* target,
                                                  const float* gy, float* gx, double scale,
                                                  long long gy_stride, long long cols,
                                                  long long n) {
  softmax_xent_bwd(logp, target, gy, gx, scale, gy_stride, cols, n);
}

extern "C" __global__ void softmax_xent_bwd_double(const double* logp, const long long* target,
                                                   const double* gy, double* gx, double scale,
                                                   long long gy_stride, long long cols,
                                                   long long n) {
  softmax_xent_bwd(logp, target, gy, gx, scale, gy_stride, cols, n);
}
