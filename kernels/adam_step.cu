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
