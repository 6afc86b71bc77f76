// d gi = [dr, dz, dn],  d gh = [dr, dz, dn r],  dh = gy z   reference: gpugrad/kernels.py gru_cell_bwd
// act (4, rows, hidden) = [r, z, n, gh_n] from gru_cell; gy the gradient of h';
// dn = gy (1 - z)(1 - n^2), dz = gy (h - n) z (1 - z), dr = dn gh_n r (1 - r). One thread per
// (row, unit) writes that unit's gate gradients into d_gi, d_gh (rows, 3 hidden) and dh.

template <typename T>
__device__ __forceinline__ void gru_cell_bwd(const T* __restrict__ act, const T* __restrict__ h,
                                             const T* __restrict__ gy, T* __restrict__ d_gi,
                                             T* __restrict__ d_gh, T* __restrict__ dh,
                                             long long rows, long long hidden) {
  const long long n = rows * hidden;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long row = e / hidden, j = e - row * hidden;
    const T r = act[e], z = act[n + e], nn = act[2 * n + e], ghn = act[3 * n + e], g = gy[e];
    const T dn = g * (T(1) - z) * (T(1) - nn * nn);
    const T dz = g * (h[e] - nn) * z * (T(1) - z);
    const T dr = dn * ghn * r * (T(1) - r);
    const long long at = row * 3 * hidden + j;
    d_gi[at] = d_gh[at] = dr;
    d_gi[at + hidden] = d_gh[at + hidden] = dz;
    d_gi[at + 2 * hidden] = dn;
    d_gh[at + 2 * hidden] = dn * r;
    dh[e] = g * z;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void gru_cell_bwd_float(const float* act, const float* h, const float* gy,
                                              float* d_gi, float* d_gh, float* dh,
                                              long long rows, long long hidden) {
  gru_cell_bwd(act, h, gy, d_gi, d_gh, dh, rows, hidden);
}

extern "C" __global__ void gru_cell_bwd_double(const double* act, const double* h,
                                               const double* gy, double* d_gi, double* d_gh,
                                               double* dh, long long rows, long long hidden) {
  gru_cell_bwd(act, h, gy, d_gi, d_gh, dh, rows, hidden);
}
