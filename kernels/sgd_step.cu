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
