// GRU step: r, z = sigmoid(gi + gh), n = tanh(gi_n + r gh_n), gh = hh + b;  h' = n + z (h - n)   reference: gpugrad/kernels.py gru_cell
// gi = x W_ih^T + b_ih and hh = h W_hh^T are (rows, 3 hidden), gate blocks r, z, n; b is
// (3 hidden,) or null (no bias). One thread per (row, unit) writes h' (rows, hidden) and act
// (4, rows, hidden) = [r, z, n, gh_n], which the backward reads.

template <typename T>
__device__ __forceinline__ T sigmoid_of(T x) {
  return T(0.5) * tanh(T(0.5) * x) + T(0.5);
}

template <typename T>
__device__ __forceinline__ void gru_cell(const T* __restrict__ gi, const T* __restrict__ hh,
                                         const T* __restrict__ b, const T* __restrict__ h,
                                         T* __restrict__ h_new, T* __restrict__ act,
                                         long long rows, long long hidden) {
  const long long n = rows * hidden;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long row = e / hidden, j = e - row * hidden;
    const long long at = row * 3 * hidden + j;
    T gh[3];
    for (int k = 0; k < 3; ++k) {
      gh[k] = hh[at + k * hidden];
      if (b != nullptr) gh[k] += b[j + k * hidden];
    }
    const T r = sigmoid_of(gi[at] + gh[0]), z = sigmoid_of(gi[at + hidden] + gh[1]);
    const T nn = tanh(gi[at + 2 * hidden] + r * gh[2]);
    h_new[e] = nn + z * (h[e] - nn);
    act[e] = r;
    act[n + e] = z;
    act[2 * n + e] = nn;
    act[3 * n + e] = gh[2];
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void gru_cell_float(const float* gi, const float* hh, const float* b,
                                          const float* h, float* h_new, float* act,
                                          long long rows, long long hidden) {
  gru_cell(gi, hh, b, h, h_new, act, rows, hidden);
}

extern "C" __global__ void gru_cell_double(const double* gi, const double* hh, const double* b,
                                           const double* h, double* h_new, double* act,
                                           long long rows, long long hidden) {
  gru_cell(gi, hh, b, h, h_new, act, rows, hidden);
}
