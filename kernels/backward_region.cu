// One backward region of elementwise nodes in one pass   reference: gpugrad/autograd/fusion.py
//
// The frame of the kernels the engine generates at run time. When backward reaches a chain of
// elementwise nodes (no hooks, no retained grads, no graph of the backward being built), their
// backward formulas are traced into one expression DAG and written out as a kernel: every
// gradient that stays inside the region lives in a register, and each gradient leaving it is
// written once, already summed over the edges that carry it. gpugrad/autograd/_trace.py writes
// the kernel; this file gives it its helpers (everything above the example region) and shows,
// compiled as it stands, what a generated kernel looks like.
//
// Conventions of a generated entry:
//   in<k>, in<k>_stride   an input (an upstream gradient or a saved value); stride 1 when it
//                         holds one value per element, 0 when one value for all (the
//                         gradient of a sum, expanded without a copy)
//   p<k>                  a saved number (the 2 of x * 2), passed by value
//   out<k>                a gradient leaving the region, contiguous
//   n                     the number of elements

template <typename T>
__device__ __forceinline__ T gg_sigmoid(T x) {
  return T(0.5) * tanh(T(0.5) * x) + T(0.5);   // as kernels/sigmoid.cu: cannot overflow
}

template <typename T>
__device__ __forceinline__ T gg_sign(T x) {
  return T((x > T(0)) - (x < T(0)));           // 0 at 0 and nan at nan, as numpy
}

template <typename T>
__device__ __forceinline__ T gg_sign_nan(T x) {
  return x != x ? x : gg_sign(x);
}

template <typename T>
__device__ __forceinline__ T gg_max(T a, T b) {
  return (a != a || a > b) ? a : b;            // numpy's maximum: a nan wins
}

template <typename T>
__device__ __forceinline__ T gg_min(T a, T b) {
  return (a != a || a < b) ? a : b;
}

template <typename T>
__device__ __forceinline__ T gg_nan() {
  return T(0) / T(0);
}

// -- example region: the backward of (tanh(x) * sigmoid(x) + relu(x)).sum() ---------------------
// in0: the gradient of the sum (one value, stride 0), in1: t = tanh(x), in2: s = sigmoid(x),
// in3: r = relu(x); out0: the gradient of x, summed over its three uses.
template <typename T>
__device__ __forceinline__ void example_region(const T* __restrict__ in0, long long in0_stride,
                                               const T* __restrict__ in1, long long in1_stride,
                                               const T* __restrict__ in2, long long in2_stride,
                                               const T* __restrict__ in3, long long in3_stride,
                                               T* __restrict__ out0, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T v0 = in0[i * in0_stride];          // AddBackward0: both inputs get v0
    const T v1 = in1[i * in1_stride];
    const T v2 = in2[i * in2_stride];
    const T v3 = v0 * v2;                      // MulBackward0: grad of tanh(x) ...
    const T v4 = v0 * v1;                      // ... and of sigmoid(x)
    const T v5 = v3 * (T(1) - v1 * v1);        // TanhBackward0
    const T v6 = v4 * v2 * (T(1) - v2);        // SigmoidBackward0
    const T v7 = in3[i * in3_stride];
    const T v8 = v0 * T(v7 > T(0));            // ReluBackward0
    out0[i] = v5 + v6 + v8;                    // x's three gradients, summed in the register
  }
}

extern "C" __global__ void backward_region_float(
    const float* in0, long long in0_stride, const float* in1, long long in1_stride,
    const float* in2, long long in2_stride, const float* in3, long long in3_stride,
    float* out0, long long n) {
  example_region(in0, in0_stride, in1, in1_stride, in2, in2_stride, in3, in3_stride, out0, n);
}

extern "C" __global__ void backward_region_double(
    const double* in0, long long in0_stride, const double* in1, long long in1_stride,
    const double* in2, long long in2_stride, const double* in3, long long in3_stride,
    double* out0, long long n) {
  example_region(in0, in0_stride, in1, in1_stride, in2, in2_stride, in3, in3_stride, out0, n);
}
