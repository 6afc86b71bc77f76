// LSTM step: i, f, g, o = gates of hh + gi + b;  c' = f c + i g;  h' = o tanh(c')   reference: gpugrad/kernels.py lstm_cell
// hh = h W_hh^T and gi = x W_ih^T + b_ih are (rows, 4 hidden), gate blocks i, f, g, o; b is
// (4 hidden,) or null (no bias). One thread per (row, unit) reads its four gates and writes
// h', c' (rows, hidden) and act (5, rows, hidden) = [i, f, g, o, tanh(c')], which the backward
// reads. sigmoid(x) = 0.5 tanh(x / 2) + 0.5, as the reference: it cannot overflow.

template <typename T>
__device__ __forceinline__ T sigmoid_of(T x) {
  return T(0.5) * tanh(T(0.5) * x) + T(0.5);
}

template <typename T>
__device__ __forceinline__ void lstm_cell(const T* __restrict__ hh, const T* __restrict__ gi,
                                          const T* __restrict__ b, const T* __restrict__ c,
                                          T* __restrict__ h_new, T* __restrict__ c_new,
                                          T* __restrict__ act, long long rows, long long hidden) {
  const long long n = rows * hidden;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long row = e / hidden, j = e - row * hidden;
    const long long at = row * 4 * hidden + j;
    T pre[4];
    for (int k = 0; k < 4; ++k) {
      pre[k] = hh[at + k * hidden] + gi[at + k * hidden];
      if (b != nullptr) pre[k] += b[j + k * hidden];
    }
    const T i = sigmoid_of(pre[0]), f = sigmoid_of(pre[1]), g = tanh(pre[2]),
            o = sigmoid_of(pre[3]);
    const T cn = f * c[e] + i * g;
    const T tc = tanh(cn);
    c_new[e] = cn;
    h_new[e] = o * tc;
    act[e] = i;
    act[n + e] = f;
    act[2 * n + e] = g;
    act[3 * n + e] = o;
    act[4 * n + e] = tc;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void lstm_cell_float(const float* hh, const float* gi, const float* b,
                                           const float* c, float* h_new, float* c_new,
                                           float* act, long long rows, long long hidden) {
  lstm_cell(hh, gi, b, c, h_new, c_new, act, rows, hidden);
}

extern "C" __global__ void lstm_cell_double(const double* hh, const double* gi, const double* b,
                                            const double* c, double* h_new, double* c_new,
                                            double* act, long long rows, long long hidden) {
  lstm_cell(hh, gi, b, c, h_new, c_new, act, rows, hidden);
}
