"""How the float32 erf of the exact GELU (gpugrad/kernels.py: _ERF_P, _ERF_Q) was fitted:
erf(x) / x as a rational function P(t) / Q(t) of t = x^2 on [0, 4] (degrees 6 and 5, Q(0) = 1),
by linearised least squares with Lawson reweighting towards the minimax error. Prints the
coefficients, the fit's relative error in exact arithmetic and the error evaluated in float32.

    python bench/tuning/erf_fit.py
"""
import numpy as np
from scipy import special


def fit(m=6, n=5, hi=4.0, points=40001, iterations=60):
    x = np.linspace(0, hi, points)
    x[0] = 1e-8
    t, f = x * x, special.erf(x) / x
    w = np.ones_like(t)
    for i in range(iterations):
        a = np.hstack([t[:, None] ** np.arange(m + 1),
                       -f[:, None] * t[:, None] ** np.arange(1, n + 1)])
        scale = (w / f)[:, None]
        c = np.linalg.lstsq(a * scale, f * scale[:, 0], rcond=None)[0]
        p, q = c[:m + 1], np.concatenate([[1.0], c[m + 1:]])
        qt = np.polyval(q[::-1], t)
        err = np.abs(np.polyval(p[::-1], t) / qt - f) / f
        w = w * np.sqrt(err / err.max()) if i > 10 else 1 / np.abs(qt)
        w /= w.max()
    return p, q, err.max()


if __name__ == "__main__":
    from gpugrad import kernels
    p, q, err = fit()
    print("P =", [float(v) for v in p])
    print("Q =", [float(v) for v in q])
    print(f"relative error of the fit: {err:.2e}")
    x = np.linspace(-9, 9, 2_000_001)
    exact = 0.5 * (1 + special.erf(x / np.sqrt(2)))
    print(f"gelu_cdf in float32, max abs error: "
          f"{np.abs(kernels.gelu_cdf(x.astype(np.float32)) - exact).max():.2e}")
