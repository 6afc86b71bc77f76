"""The registry of public names (``gpugrad/_exports.py``): an op declares its ``torch.*`` name,
its Tensor method and its in-place form next to it, and the installers loop over what was
declared."""
from __future__ import annotations

import numpy as np
import pytest

import gpugrad
from gpugrad import _exports


def _toy_registry():
    """A throwaway pair of tables and decorators over them (the real ones stay untouched)."""
    torch, methods = {}, {}

    def export(*names, **kw):
        return _exports.export(*names, torch=torch, methods=methods, **kw)

    def tensor_method(*names):
        return _exports.tensor_method(*names, methods=methods)
    return torch, methods, export, tensor_method


def test_export_declares_function_method_and_in_place_form():
    torch, methods, export, _ = _toy_registry()

    @export("toy", method=True, inplace=True)
    def toy(input, scale=2.0):
        return input * scale + 1

    assert torch == {"toy": toy}
    assert methods["toy"] is toy and set(methods) == {"toy", "toy_"}
    x = gpugrad.tensor([1.0, 2.0])
    assert np.allclose(torch["toy"](x)._data, [3.0, 5.0])
    assert np.allclose(methods["toy"](x, scale=3.0)._data, [4.0, 7.0])
    out = methods["toy_"](x, 3.0)            # the in-place form writes into x and returns it
    assert out is x and np.allclose(x._data, [4.0, 7.0])
    methods["toy_"](x, scale=1.0)
    assert np.allclose(x._data, [5.0, 8.0])


def test_in_place_form_records_the_op_in_the_graph():
    _, methods, export, _ = _toy_registry()

    @export("toy", method=True, inplace=True)
    def toy(input):
        return input * 3

    a = gpugrad.tensor([1.0, 2.0], requires_grad=True)
    y = a * 1
    methods["toy_"](y)
    y.sum().backward()
    assert np.allclose(a.grad._data, [3.0, 3.0])


def test_export_names_methods_and_in_place_forms_explicitly():
    torch, methods, export, tensor_method = _toy_registry()

    @export("toy", "toy_alias", method=("toy", "__toy__"), inplace=("toy_",))
    def toy(input):
        return input

    assert torch == {"toy": toy, "toy_alias": toy}
    assert methods["toy"] is toy and methods["__toy__"] is toy and "toy_" in methods
    prop = tensor_method("toy_prop")(property(lambda s: 7))
    assert methods["toy_prop"] is prop
    export("toy")(toy)                       # the same object again is no duplicate


def test_a_name_declared_twice_with_two_objects_raises():
    _, _, export, tensor_method = _toy_registry()

    @export("toy", method=True)
    def toy(input):
        return input

    with pytest.raises(RuntimeError, match=r"torch\.toy is declared twice"):
        @export("toy")
        def other(input):
            return input
    with pytest.raises(RuntimeError, match=r"Tensor\.toy is declared twice"):
        tensor_method("toy")(lambda s: s)


def test_every_declared_method_is_installed_and_every_torch_name_exported():
    for name, obj in _exports.METHODS.items():
        assert gpugrad.Tensor.__dict__[name] is obj, f"Tensor.{name} is not the declared object"
    for name, obj in _exports.TORCH.items():
        assert getattr(gpugrad, name) is obj, f"gpugrad.{name} is not the declared object"
