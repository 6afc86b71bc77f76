"""nn.utils.spectral_norm, the hook form."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

from gpugrad import nn
from gpugrad.autograd import gradcheck
from tests.nn.utils._layers import _linear


def test_spectral_norm_hook_divides_by_the_top_singular_value(device, rng):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    nn.utils.spectral_norm(m, n_power_iterations=50)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    m(tensor(np.zeros((1, 4)), device))   # training: 50 power-method steps
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(to_numpy(m.weight), w0 / sigma, rtol=1e-10)
    m.eval()
    u = to_numpy(m.weight_u)
    m(tensor(np.zeros((1, 4)), device))
    np.testing.assert_array_equal(to_numpy(m.weight_u), u)   # eval: no refinement
    # d(w / sigma)/dw with u, v fixed: sigma = u^T W v
    uu, vv = tensor(u, device), m.weight_v.detach()
    assert gradcheck(lambda w: w / uu.dot(w.mv(vv)), (m.weight_orig.detach().requires_grad_(),))
    nn.utils.remove_spectral_norm(m)
    np.testing.assert_allclose(to_numpy(m.weight), w0 / sigma, rtol=1e-10)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got "
                                         "n_power_iterations=0$"):
        nn.utils.spectral_norm(m, n_power_iterations=0)


def test_spectral_norm_of_any_transposed_convolution_normalises_dim_1():
    # a transposed convolution's weight is (in, out / groups, *kernel): u lives in dim 1
    for conv in (nn.ConvTranspose1d(2, 3, 2), nn.ConvTranspose2d(2, 3, 2),
                 nn.ConvTranspose3d(2, 3, 2)):
        assert nn.utils.spectral_norm(conv).weight_u.shape == (3,)
    assert nn.utils.parametrizations.spectral_norm(
        nn.ConvTranspose3d(2, 3, 2)).parametrizations.weight[0].dim == 1
    assert nn.utils.spectral_norm(nn.Conv3d(2, 5, 2)).weight_u.shape == (5,)   # (out, in, ...)
