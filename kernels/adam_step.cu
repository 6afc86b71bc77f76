// p -= lr m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps)   reference: gpugrad/kernels.py adam_step
// with m = b1 m + (1-b1) g,  v = b2 v + (1-b2) g^2,  t = step.
// In place on p, m, v. decoupled = 0: Adam, weight decay added to g (L2); decoupled = 1: AdamW,
// p *= 1 - lr wd first. Hyper-parameters arrive as double and the bias corrections are formed in
// double once per thread, then rounded to T, as the reference does on the host: in float,
// 1 - 0.999f is off by 1.3e-5 relative. Arrays contiguous, n elements; step t >= 1.

template <typename T>
__device__ __forceinline__ void adam_step(T* __restrict__ p, const T* __restrict__ g,
                                          T* __restrict__ m, T* __restrict__ v, double lr,
                                          double beta1, double beta2, double eps,
                                          double weight_decay, long long step, int decoupled,
                                          long long n) {
  const double bc1 = 1 - pow(beta1, (double)step);
  const double bc2 = 1 - pow(beta2, (double)step);
  const T step_size = T(lr / bc1);
  const T tbc2 = T(bc2);
  const T teps = T(eps);
  const T b1 = T(beta1), omb1 = T(1 - beta1);
  const T b2 = T(beta2), omb2 = T(1 - beta2);
  const T twd = T(weight_decay);
  const T decay = T(1 - lr * weight_decay);
  const bool l2 = weight_decay != 0 && !decoupled;
  const bool shrink = weight_decay != 0 && decoupled;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    T pi = p[i];
    T gi = g[i];
    if (shrink) pi = pi * decay;
    if (l2) gi = gi + twd * pi;
    const T mi = m[i] * b1 + omb1 * gi;
    const T vi = v[i] * b2 + omb2 * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step_size * mi / (sqrt(vi / tbc2) + teps);
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void adam_step_float(float* p, const float* g, float* m, float* v,
                                           double lr, double beta1, double beta2, double eps,
                                           double weight_decay, long long step, int decoupled,
                                           long long n) {
  adam_step(p, g, m, v, lr, beta1, beta2, eps, weight_decay, step, decoupled, n);
}

extern "C" __global__ void adam_step_double(double* p, const double* g, double* m, double* v,
                                            double lr, double beta1, double beta2, double eps,
                                            double weight_decay, long long step, int decoupled,
                                            long long n) {
  adam_step(p, g, m, v, lr, beta1, beta2, eps, weight_decay, step, decoupled, n);
}

// Multi-tensor entries: the same step on up to 8 tensors in one launch (blockIdx.y picks the
// tensor, gridDim.y is how many); slot k takes <array>_k and n_k, unused slots are null with
// n_k = 0. gpugrad/_cuda_kernels.py launch_multi binds them (one launch for a whole model's
// parameters where the loop above would make one per parameter).

extern "C" __global__ void adam_step_multi_float(
    float* p_0, const float* g_0, float* m_0, float* v_0, long long n_0,
    float* p_1, const float* g_1, float* m_1, float* v_1, long long n_1,
    float* p_2, const float* g_2, float* m_2, float* v_2, long long n_2,
    float* p_3, const float* g_3, float* m_3, float* v_3, long long n_3,
    float* p_4, const float* g_4, float* m_4, float* v_4, long long n_4,
    float* p_5, const float* g_5, float* m_5, float* v_5, long long n_5,
    float* p_6, const float* g_6, float* m_6, float* v_6, long long n_6,
    float* p_7, const float* g_7, float* m_7, float* v_7, long long n_7,
    double lr, double beta1, double beta2, double eps, double weight_decay, long long step,
    int decoupled) {
  float* const p[8] = {p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7};
  const float* const g[8] = {g_0, g_1, g_2, g_3, g_4, g_5, g_6, g_7};
  float* const m[8] = {m_0, m_1, m_2, m_3, m_4, m_5, m_6, m_7};
  float* const v[8] = {v_0, v_1, v_2, v_3, v_4, v_5, v_6, v_7};
  const long long n[8] = {n_0, n_1, n_2, n_3, n_4, n_5, n_6, n_7};
  const int k = blockIdx.y;
  adam_step(p[k], g[k], m[k], v[k], lr, beta1, beta2, eps, weight_decay, step, decoupled, n[k]);
}

extern "C" __global__ void adam_step_multi_double(
    double* p_0, const double* g_0, double* m_0, double* v_0, long long n_0,
    double* p_1, const double* g_1, double* m_1, double* v_1, long long n_1,
    double* p_2, const double* g_2, double* m_2, double* v_2, long long n_2,
    double* p_3, const double* g_3, double* m_3, double* v_3, long long n_3,
    double* p_4, const double* g_4, double* m_4, double* v_4, long long n_4,
    double* p_5, const double* g_5, double* m_5, double* v_5, long long n_5,
    double* p_6, const double* g_6, double* m_6, double* v_6, long long n_6,
    double* p_7, const double* g_7, double* m_7, double* v_7, long long n_7,
    double lr, double beta1, double beta2, double eps, double weight_decay, long long step,
    int decoupled) {
  double* const p[8] = {p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7};
  const double* const g[8] = {g_0, g_1, g_2, g_3, g_4, g_5, g_6, g_7};
  double* const m[8] = {m_0, m_1, m_2, m_3, m_4, m_5, m_6, m_7};
  double* const v[8] = {v_0, v_1, v_2, v_3, v_4, v_5, v_6, v_7};
  const long long n[8] = {n_0, n_1, n_2, n_3, n_4, n_5, n_6, n_7};
  const int k = blockIdx.y;
  adam_step(p[k], g[k], m[k], v[k], lr, beta1, beta2, eps, weight_decay, step, decoupled, n[k]);
}
