// p -= lr * (d + momentum buf if nesterov else buf)   reference: gpugrad/kernels.py sgd_step
// with d = g + wd p,  buf = d if first else momentum buf + (1 - dampening) d.
// In place on p and buf (PyTorch's SGD). buf is not touched (and may be null) when
// momentum == 0. Hyper-parameters arrive as double and are rounded to T once, like the
// reference's t(...) on host-computed Python floats; arrays contiguous, n elements.

template <typename T>
__device__ __forceinline__ void sgd_step(T* __restrict__ p, const T* __restrict__ g,
                                         T* __restrict__ buf, double lr, double momentum,
                                         double dampening, double weight_decay, int nesterov,
                                         int first, long long n) {
  const T tlr = T(lr);
  const T tm = T(momentum);
  const T tdamp = T(1 - dampening);
  const T twd = T(weight_decay);
  const bool decay = weight_decay != 0;
  const bool use_momentum = momentum != 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T pi = p[i];
    T d = g[i];
    if (decay) d = d + twd * pi;
    if (use_momentum) {
      const T b = first ? d : buf[i] * tm + tdamp * d;
      buf[i] = b;
      d = nesterov ? d + tm * b : b;
    }
    p[i] = pi - tlr * d;
  }
}

// Unmangled entry points, one per dtype; gpugrad/_cuda_kernels.py binds arguments by name.
extern "C" __global__ void sgd_step_float(float* p, const float* g, float* buf, double lr,
                                          double momentum, double dampening,
                                          double weight_decay, int nesterov, int first,
                                          long long n) {
  sgd_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, first, n);
}

extern "C" __global__ void sgd_step_double(double* p, const double* g, double* buf, double lr,
                                           double momentum, double dampening,
                                           double weight_decay, int nesterov, int first,
                                           long long n) {
  sgd_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, first, n);
}

// Multi-tensor entries: the same step on up to 8 tensors in one launch (blockIdx.y picks the
// tensor, gridDim.y is how many); slot k takes <array>_k and n_k, unused slots are null with
// n_k = 0. gpugrad/_cuda_kernels.py launch_multi binds them (one launch for a whole model's
// parameters where the loop above would make one per parameter).

extern "C" __global__ void sgd_step_multi_float(
    float* p_0, const float* g_0, float* buf_0, long long n_0,
    float* p_1, const float* g_1, float* buf_1, long long n_1,
    float* p_2, const float* g_2, float* buf_2, long long n_2,
    float* p_3, const float* g_3, float* buf_3, long long n_3,
    float* p_4, const float* g_4, float* buf_4, long long n_4,
    float* p_5, const float* g_5, float* buf_5, long long n_5,
    float* p_6, const float* g_6, float* buf_6, long long n_6,
    float* p_7, const float* g_7, float* buf_7, long long n_7,
    double lr, double momentum, double dampening, double weight_decay, int nesterov, int first) {
  float* const p[8] = {p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7};
  const float* const g[8] = {g_0, g_1, g_2, g_3, g_4, g_5, g_6, g_7};
  float* const buf[8] = {buf_0, buf_1, buf_2, buf_3, buf_4, buf_5, buf_6, buf_7};
  const long long n[8] = {n_0, n_1, n_2, n_3, n_4, n_5, n_6, n_7};
  const int k = blockIdx.y;
  sgd_step(p[k], g[k], buf[k], lr, momentum, dampening, weight_decay, nesterov, first, n[k]);
}

extern "C" __global__ void sgd_step_multi_double(
    double* p_0, const double* g_0, double* buf_0, long long n_0,
    double* p_1, const double* g_1, double* buf_1, long long n_1,
    double* p_2, const double* g_2, double* buf_2, long long n_2,
    double* p_3, const double* g_3, double* buf_3, long long n_3,
    double* p_4, const double* g_4, double* buf_4, long long n_4,
    double* p_5, const double* g_5, double* buf_5, long long n_5,
    double* p_6, const double* g_6, double* buf_6, long long n_6,
    double* p_7, const double* g_7, double* buf_7, long long n_7,
    double lr, double momentum, double dampening, double weight_decay, int nesterov, int first) {
  double* const p[8] = {p_0, p_1, p_2, p_3, p_4, p_5, p_6, p_7};
  const double* const g[8] = {g_0, g_1, g_2, g_3, g_4, g_5, g_6, g_7};
  double* const buf[8] = {buf_0, buf_1, buf_2, buf_3, buf_4, buf_5, buf_6, buf_7};
  const long long n[8] = {n_0, n_1, n_2, n_3, n_4, n_5, n_6, n_7};
  const int k = blockIdx.y;
  sgd_step(p[k], g[k], buf[k], lr, momentum, dampening, weight_decay, nesterov, first, n[k]);
}
