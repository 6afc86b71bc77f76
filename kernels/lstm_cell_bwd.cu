// d gates = [dc' g i(1-i), dc' c f(1-f), dc' i (1-g^2), gh tc o(1-o)],  dc = dc' f   reference: gpugrad/kernels.py lstm_cell_bwd
// act (5, rows, hidden) = [i, f, g, o, tc = tanh(c')] from lstm_cell; c the step's input cell
// state; gh, gc the gradients of h' and c' (null: zero); dc' = gc + gh o (1 - tc^2). One
// thread per (row, unit) writes that unit's four gate gradients into d (rows, 4 hidden) and dc.

template <typename T>
__device__ __forceinline__ void lstm_cell_bwd(const T* __restrict__ act, const T* __restrict__ c,
                                              const T* __restrict__ gh, const T* __restrict__ gc,
                                              T* __restrict__ d, T* __restrict__ dc,
                                              long long rows, long long hidden) {
  const long long n = rows * hidden;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long row = e / hidden, j = e - row * hidden;
    const T i = act[e], f = act[n + e], g = act[2 * n + e], o = act[3 * n + e],
            tc = act[4 * n + e];
    const T dh = gh != nullptr ? gh[e] : T(0);
    const T dcn = (gc != nullptr ? gc[e] : T(0)) + dh * o * (T(1) - tc * tc);
    const long long at = row * 4 * hidden + j;
    d[at] = dcn * g * i * (T(1) - i);
    d[at + hidden] = dcn * c[e] * f * (T(1) - f);
    d[at + 2 * hidden] = dcn * i * (T(1) - g * g);
    d[at + 3 * hidden] = dh * tc * o * (T(1) - o);
    dc[e] = dcn * f;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void lstm_cell_bwd_float(const float* act, const float* c, const float* gh,
                                               const float* gc, float* d, float* dc,
                                               long long rows, long long hidden) {
  lstm_cell_bwd(act, c, gh, gc, d, dc, rows, hidden);
}

extern "C" __global__ void lstm_cell_bwd_double(const double* act, const double* c,
                                                const double* gh, const double* gc, double* d,
                                                double* dc, long long rows, long long hidden) {
  lstm_cell_bwd(act, c, gh, gc, d, dc, rows, hidden);
}
