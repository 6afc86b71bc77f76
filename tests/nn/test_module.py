"""nn.Module API: extra state, state-dict hooks and ``_metadata``, lookups by dotted path, the
in-place reassignment of registered names, and PyTorch 2.13's error messages."""
from __future__ import annotations

import pickle
import re
from collections import OrderedDict

import pytest

import gpugrad
import gpugrad.nn as nn


def _stateful(lib, get=True, set_=True):
    class Counter(lib.nn.Linear):
        if get:
            def get_extra_state(self):
                return {"steps": 7}
        if set_:
            def set_extra_state(self, state):
                self.restored = state
    return Counter


def _model(lib):
    """A nested model with tied weights, a buffer and a module with extra state."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2)
            self.e = _stateful(lib)(2, 2)
            self.seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
            self.seq[1].weight = self.seq[0].weight
            self.register_buffer("buf", lib.zeros(2))
    return Net()


KEYS = ["buf", "a.weight", "a.bias", "e.weight", "e.bias", "e._extra_state", "seq.0.weight",
        "seq.0.bias", "seq.1.weight", "seq.1.bias"]
METADATA = [("", {"version": 1}), ("a", {"version": 1}), ("e", {"version": 1}),
            ("seq", {"version": 1}), ("seq.0", {"version": 1}), ("seq.1", {"version": 1})]


# -- extra state ------------------------------------------------------------------------------
def test_extra_state_is_saved_after_params_and_loaded():
    sd = _model(gpugrad).state_dict()
    assert list(sd) == KEYS
    assert sd["e._extra_state"] == {"steps": 7}
    m = _model(gpugrad)
    assert repr(m.load_state_dict(sd)) == "<All keys matched successfully>"
    assert m.e.restored == {"steps": 7}


def test_extra_state_missing_and_unexpected():
    sd = _model(gpugrad).state_dict()
    del sd["e._extra_state"]
    with pytest.raises(RuntimeError, match=re.escape(
            'Missing key(s) in state_dict: "e._extra_state". ')):
        _model(gpugrad).load_state_dict(sd)
    assert _model(gpugrad).load_state_dict(sd, strict=False).missing_keys == ["e._extra_state"]
    # a module without set_extra_state does not expect the key
    m = _stateful(gpugrad, set_=False)(2, 2)
    r = m.load_state_dict(_stateful(gpugrad)(2, 2).state_dict(), strict=False)
    assert (r.missing_keys, r.unexpected_keys) == ([], ["_extra_state"])


# -- state_dict and _metadata -----------------------------------------------------------------
def test_state_dict_metadata_and_tied_order():
    sd = _model(gpugrad).state_dict()
    assert type(sd) is OrderedDict
    assert list(sd._metadata.items()) == METADATA
    assert list(_model(gpugrad).state_dict(prefix="p.")._metadata) == [
        "p", "p.a", "p.e", "p.seq", "p.seq.0", "p.seq.1"]
    dest = {}
    nn.Linear(1, 1).state_dict(destination=dest)
    assert list(dest) == ["weight", "bias"] and not hasattr(dest, "_metadata")
    assert nn.Module._version == 1
    assert list(pickle.loads(pickle.dumps(sd))._metadata) == [k for k, _ in METADATA]


def test_state_dict_positional_args_warn():
    d = OrderedDict()
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        out = nn.Linear(1, 1).state_dict(d, "x.")
    assert out is d and list(d) == ["x.weight", "x.bias"]


def test_state_dict_hooks():
    log = []
    m = _model(gpugrad)
    m.register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix, kv)))

    def post(mod, sd, prefix, md):
        log.append(("post", prefix, md, len(sd)))
        sd[prefix + "added"] = 1
    m.seq.register_state_dict_post_hook(post)
    m.register_state_dict_post_hook(post)
    keys = list(m.state_dict(prefix="r.", keep_vars=True))
    assert log == [("pre", "r.", True), ("post", "r.seq.", {"version": 1}, 10),
                   ("post", "r.", {"version": 1}, 11)]
    assert keys[-2:] == ["r.seq.added", "r.added"]


def test_private_state_dict_hook_replaces_only_at_root():
    m = _model(gpugrad)
    m.seq._register_state_dict_hook(lambda mod, sd, p, md: {"ignored": 1})
    m._register_state_dict_hook(lambda mod, sd, p, md: OrderedDict(n=len(sd)))
    assert dict(m.state_dict()) == {"n": 10}


def test_state_dict_hook_errors_and_removal():
    m = nn.Linear(1, 1)
    m.register_state_dict_post_hook(lambda *a: 1)
    with pytest.raises(RuntimeError, match="^state_dict post-hook must return None$"):
        m.state_dict()

    def hook(*a):
        pass
    m = nn.Linear(1, 1)
    m.register_state_dict_post_hook(hook)
    with pytest.raises(RuntimeError, match="^Cannot register the same function as the state "
                       "dict post hook that was previously registered via "
                       "register_state_dict_post_hook$"):
        m._register_state_dict_hook(hook)
    calls = []
    h = m.register_state_dict_pre_hook(lambda *a: calls.append(1))
    m.state_dict()
    h.remove()
    m.state_dict()
    assert calls == [1]


def test_load_state_dict_hooks():
    log = []
    m = _model(gpugrad)

    def pre(mod, sd, prefix, md, strict, missing, unexpected, errors):
        log.append(("pre", type(mod).__name__, sorted(sd), prefix, md, strict))

    def rename(sd, prefix, md, strict, missing, unexpected, errors):
        if prefix + "old_w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "old_w")

    def forgive(mod, keys):
        log.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys.clear()
    m.seq.register_load_state_dict_pre_hook(pre)
    m.a._register_load_state_dict_pre_hook(rename)
    m.seq[0].register_load_state_dict_post_hook(forgive)
    sd = m.state_dict()
    sd["a.old_w"] = sd.pop("a.weight")
    del sd["seq.0.bias"]
    sd["seq.zz"] = gpugrad.zeros(1)
    with pytest.raises(RuntimeError, match=re.escape(
            'Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: '
            '"seq.zz". ')):
        m.load_state_dict(sd)
    assert log == [
        ("pre", "Sequential", ["seq.0.weight", "seq.1.bias", "seq.1.weight", "seq.zz"], "seq.",
         {"version": 1}, True),
        ("post", ["seq.0.bias"], ["seq.zz"])]


def test_load_state_dict_post_hook_must_return_none():
    m = nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda *a: 1)
    with pytest.raises(AssertionError, match="are not expected to return new values"):
        m.load_state_dict(m.state_dict())


def test_load_state_dict_unexpected_key_order_and_metadata():
    m = _model(gpugrad)
    sd = OrderedDict([("seq.0.zzz", gpugrad.zeros(1)), ("top", gpugrad.zeros(1))])
    sd.update(m.state_dict())
    sd["nomod.x"] = gpugrad.zeros(1)
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == []
    assert r.unexpected_keys == ["top", "nomod.x", "seq.0.zzz"]   # module by module
    seen = []
    lin = nn.Linear(1, 1)
    lin._register_load_state_dict_pre_hook(lambda sd, p, md, *a: seen.append(dict(md)))
    full = lin.state_dict()
    lin.load_state_dict(full, assign=True)
    lin.load_state_dict(dict(full))
    assert seen == [{"version": 1, "assign_to_params_buffers": True}, {}]


def test_load_state_dict_assign_and_scalar_compat():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    sd = {k: v.clone().double() if v.is_floating_point() else v.clone()
          for k, v in m.state_dict().items()}
    m.load_state_dict(sd, assign=True)
    assert m[0].weight is not w and type(m[0].weight) is nn.Parameter
    assert m[0].weight.dtype == gpugrad.float64 and m[0].weight.requires_grad
    assert m[1].running_mean is sd["1.running_mean"]
    assert list(m.state_dict()) == list(sd)
    s = nn.Module()
    s.p = nn.Parameter(gpugrad.tensor(1.0))
    s.load_state_dict({"p": gpugrad.tensor([5.0])})
    assert s.p.item() == 5.0


# -- lookups by path --------------------------------------------------------------------------
def test_get_parameter_buffer_submodule_errors():
    seq = nn.Sequential(nn.Linear(1, 1), nn.BatchNorm1d(1))
    assert seq.get_buffer("1.running_var") is seq[1].running_var
    cases = [
        (lambda: nn.Linear(2, 2, bias=False).get_parameter("bias"),
         "`bias` is not an nn.Parameter"),
        (lambda: seq.get_parameter("1.running_mean"), "`running_mean` is not an nn.Parameter"),
        (lambda: nn.Linear(2, 2).get_parameter("xyz"), "Linear has no attribute `xyz`"),
        (lambda: seq.get_parameter("3.weight"), "Sequential has no attribute `3`"),
        (lambda: seq.get_buffer("1.weight"), "`weight` is not a buffer"),
        (lambda: seq.get_buffer("1.zzz"), "BatchNorm1d has no attribute `zzz`"),
        (lambda: nn.Linear(1, 1).get_submodule("forward"), "`forward` is not an nn.Module"),
    ]
    m = nn.Module()
    m.p = nn.Parameter(gpugrad.ones(1))
    cases.append((lambda: m.get_submodule("p.x"), "`p` is not an nn.Module"))
    for fn, msg in cases:
        with pytest.raises(AttributeError, match="^" + re.escape(msg) + "$"):
            fn()


def test_set_submodule():
    m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    assert m.set_submodule("1.0", nn.Tanh()) is None
    m.set_submodule("1.new", nn.Sigmoid())
    assert [n for n, _ in m.named_modules()] == ["", "0", "1", "1.0", "1.new"]
    assert type(m[1][0]) is nn.Tanh
    cases = [
        (lambda: m.set_submodule("1.other", nn.Tanh(), strict=True), AttributeError,
         "Sequential has no attribute `other`"),
        (lambda: m.set_submodule("", nn.Tanh()), ValueError,
         "Cannot set the submodule without a target name!"),
        (lambda: m.set_submodule("0", 3), ValueError,
         "`module` is not an nn.Module, found <class 'int'>"),
        (lambda: m.set_submodule("0.weight", nn.Tanh()), AttributeError,
         "`weight` is not an nn.Module"),
        (lambda: m.set_submodule("x.y", nn.Tanh()), AttributeError,
         "Sequential has no attribute `x`"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match="^" + re.escape(msg) + "$"):
            fn()


# -- whole-module conversions -----------------------------------------------------------------
def test_type_to_empty_share_memory_compile():
    bn = nn.BatchNorm1d(2)
    assert bn.type(gpugrad.float64) is bn
    assert [t.dtype for t in bn.state_dict().values()] == [gpugrad.float64] * 5  # ints too
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    assert m.to_empty(device="cpu") is m and m[0].weight is w and w.requires_grad
    assert all(float(t.abs().sum()) == 0 for t in m.state_dict().values())
    top = nn.Sequential(nn.Linear(2, 2))
    top.register_buffer("b", gpugrad.ones(1))
    top.to_empty(device="cpu", recurse=False)
    assert top.b.item() == 0 and float(top[0].weight.abs().sum()) > 0
    assert m.share_memory() is m and m.requires_grad_(False) is m
    assert m.compile() is None
    with pytest.raises(TypeError, match="gpugrad has no bfloat16"):
        m.bfloat16()
    r = nn.Module()
    assert r.register_module("a", nn.ReLU()) is None and list(r._modules) == ["a"]


def test_zero_grad_and_dir():
    m = nn.Linear(2, 2)
    m(gpugrad.ones(1, 2)).sum().backward()
    assert m.zero_grad() is None and m.weight.grad is None
    m(gpugrad.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    m.register_buffer("b", gpugrad.ones(1))
    m.add_module("sub", nn.ReLU())
    assert {"weight", "bias", "b", "sub", "forward"} <= set(dir(m))


# -- reassignment keeps positions ---------------------------------------------------------------
def test_reassignment_keeps_position():
    s = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    s[1].weight = s[0].weight
    assert list(s.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert [n for n, _ in s.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    bn = nn.BatchNorm1d(2)
    bn.running_mean = gpugrad.ones(2)
    bn.weight = nn.Parameter(gpugrad.ones(2))
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    q = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Linear(1, 1))
    setattr(q, "0", nn.Tanh())
    assert [type(c).__name__ for c in q] == ["Tanh", "ReLU", "Linear"]


def test_buffer_assignment():
    m = nn.Linear(1, 1)
    m.q = nn.Buffer(gpugrad.ones(1), persistent=False)
    m.r = nn.Buffer(gpugrad.ones(1))
    m.q = gpugrad.zeros(1)       # stays non-persistent
    assert list(m.state_dict()) == ["weight", "bias", "r"]
    assert [n for n, _ in m.named_buffers()] == ["q", "r"]
    m.z = 3
    with pytest.raises(KeyError, match="attribute 'z' already exists"):
        m.z = nn.Buffer(gpugrad.ones(1))


# -- messages -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, exc, msg", [
    (lambda m: m.register_buffer("a.b", gpugrad.ones(1)), KeyError,
     "'buffer name can\\'t contain \".\"'"),
    (lambda m: m.register_buffer("", gpugrad.ones(1)), KeyError,
     "'buffer name can\\'t be empty string \"\"'"),
    (lambda m: m.register_parameter("a.b", None), KeyError,
     "'parameter name can\\'t contain \".\"'"),
    (lambda m: m.register_parameter("forward", None), KeyError,
     "\"attribute 'forward' already exists\""),
    (lambda m: m.add_module("a.b", None), KeyError,
     "'module name can\\'t contain \".\", got: a.b'"),
    (lambda m: m.add_module(1, None), TypeError, "module name should be a string. Got int"),
    (lambda m: (m.register_buffer("b", gpugrad.ones(1)), setattr(m, "b", 3)), TypeError,
     "cannot assign 'int' as buffer 'b' (gpugrad.nn.Buffer, gpugrad.Tensor or None expected)"),
    (lambda m: type(m)(a=1), TypeError,
     "Module.__init__() got an unexpected keyword argument 'a'"),
    (lambda m: type(m)(1, 2), TypeError,
     "Module.__init__() takes 1 positional argument but 3 were given"),
])
def test_messages(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn(nn.Module())
    assert str(info.value) == msg


# -- PyTorch as the oracle ----------------------------------------------------------------------
def test_state_dict_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _model(gpugrad).state_dict(), _model(torch).state_dict()
    assert list(ours) == list(theirs) == KEYS
    assert list(ours._metadata.items()) == list(theirs._metadata.items()) == METADATA
    assert ours["e._extra_state"] == theirs["e._extra_state"]
    for lib in (gpugrad, torch):
        m = _model(lib)
        sd = m.state_dict()
        del sd["seq.0.bias"], sd["e._extra_state"]
        sd["zz"] = lib.zeros(1)
        r = m.load_state_dict(sd, strict=False)
        assert (r.missing_keys, r.unexpected_keys) == (["e._extra_state", "seq.0.bias"], ["zz"])
