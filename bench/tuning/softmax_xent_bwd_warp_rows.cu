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
  if (cols >= 32) {   // one warp per row: the row's target and gradient are read once
    const long long rows = n / cols;
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows;
         r += warps) {
      const long long t = target[r];
      const T g = t < 0 ? T(0) : gy[r * gy_stride] * s;
      const T* lr = logp + r * cols;
      T* gr = gx + r * cols;
      for (long long j = lane; j < cols; j += 32) {
        T v = t < 0 ? T(0) : exp(lr[j]);
        if (j == t) v -= T(1);
        gr[j] = v * g;
      }
    }
    return;
  }
  // Short rows: one thread per element. NOTE: a 64-bit integer division per element would make
  // this compute-bound; the row comes from a double multiply (exact to +-1 for i < 2^53), then
  // corrected.
  const double inv_cols = 1.0 / double(cols);
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long row = (long long)(double(i) * inv_cols);
    if (row * cols > i) {
      --row;
    } else if ((row + 1) * cols <= i) {
      ++row;
    }
    const long long t = target[row];
    if (t < 0) {
      gx[i] = T(0);
      continue;
    }
    T g = exp(logp[i]);
    if (i - row * cols == t) g -= T(1);
    gx[i] = g * (gy[row * gy_stride] * s);
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
