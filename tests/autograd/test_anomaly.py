"""Anomaly mode: the warning on entry, the node and forward stack named in a backward error, the nan
check and the hint added to in-place errors."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd import Function
from tests.autograd._errors import first
from tests.autograd._tensors import t


# -- anomaly mode --------------------------------------------------------------------------------
def test_detect_anomaly_warns_on_entry():
    with pytest.warns(UserWarning, match=first(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.")):
        with gpugrad.autograd.detect_anomaly():
            assert gpugrad.autograd.is_anomaly_enabled()
    assert not gpugrad.autograd.is_anomaly_enabled()


def _make_failing_node(device):
    class MyFunc(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    return MyFunc.apply(t([1.0], device, True))  # the forward call anomaly mode remembers


def test_detect_anomaly_names_the_node_and_its_forward_stack(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gpugrad.autograd.detect_anomaly():
            y = _make_failing_node(device)
    with pytest.warns(UserWarning) as record, gpugrad.autograd.detect_anomaly():
        with pytest.raises(ValueError, match="boom in backward"):
            y.sum().backward()
    msgs = [str(w.message) for w in record]
    hit = [m for m in msgs if m.startswith(
        "Error detected in MyFuncBackward. Traceback of forward call that caused the error:")]
    assert hit, msgs
    assert "_make_failing_node" in hit[0] and "MyFunc.apply" in hit[0]


def test_detect_anomaly_nan_check(device):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gpugrad.autograd.detect_anomaly():
            x = t([0.0], device, True)
            y = t([0.0], device, True)
            z = x / y
            line = sys._getframe().f_lineno - 1
            with pytest.raises(RuntimeError) as e:
                z.sum().backward()
            # the user's line, not the code gpugrad generates
            assert str(e.value) == ("Function 'DivBackward0' returned nan values in its 1th "
                                    f"output. (created at {__file__}:{line})")
            # as PyTorch, a warning with the forward call's traceback comes first
            [w] = [str(w.message) for w in caught if "Error detected" in str(w.message)]
            assert w.startswith("Error detected in DivBackward0. Traceback of forward call "
                                "that caused the error:\n") and f"line {line}" in w
            with gpugrad.autograd.set_detect_anomaly(True, check_nan=False):
                (x / y).sum().backward()  # NaN gradients pass when the check is off
    assert np.isnan(to_numpy(y.grad)).all()


def test_anomaly_hint_in_inplace_error(device):
    x = t([1.0], device, True)
    y = x.exp()
    y.add_(1)
    with gpugrad.autograd.set_detect_anomaly(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Hint: the backtrace further above"):
            y.sum().backward()
