"""nn.Module API: registration and traversal, train/eval, dtype and device moves, deepcopy,
extra state, state dicts, their hooks and ``_metadata``, lookups by dotted path, the in-place
reassignment of registered names, reprs, DataParallel without a GPU, and PyTorch 2.13's error
messages."""
from __future__ import annotations

import copy
import pickle
import re
from collections import OrderedDict

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
from tests.nn._tensors import arr


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
    assert m.bfloat16() is m and m[0].weight.dtype == gpugrad.bfloat16 and m[0].weight is w
    assert m.float() is m and w.dtype == gpugrad.float32
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


# -- registration, modes, state dicts, copies and reprs --------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.register_buffer("running", gpugrad.zeros(4))
        self.register_buffer("scratch", gpugrad.zeros(1), persistent=False)
        self.scale = nn.Parameter(gpugrad.ones(1))
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert list(net.children()) == [net.fc1, net.act, net.fc2]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.modules())[0] is net
    assert [n for n, _ in net.named_buffers()] == ["running", "scratch"]
    assert list(net.state_dict()) == ["scale", "running", "fc1.weight", "fc1.bias",
                                      "fc2.weight", "fc2.bias"]
    assert [p.shape for p in net.parameters()] == [(1,), (4, 3), (4,), (2, 4), (2,)]
    assert net(gpugrad.randn(2, 3)).shape == (2, 2)


def test_parameters_list_follows_changes():
    net = Net()
    assert len(list(net.parameters())) == 5
    net.fc3 = nn.Linear(2, 2)
    assert len(list(net.parameters())) == 7
    net.fc1.bias = None
    assert len(list(net.parameters())) == 6
    new = nn.Parameter(gpugrad.zeros(2, 4))
    net.fc2.weight = new
    assert any(p is new for p in net.parameters())
    del net.fc3
    assert len(list(net.parameters())) == 4


def test_shared_parameters_are_listed_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(seq.parameters())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_setattr_errors():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'gpugrad.FloatTensor' as parameter 'scale'"):
        net.scale = gpugrad.ones(1)
    with pytest.raises(TypeError, match="as child module 'fc1'"):
        net.fc1 = 3

    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Forgot()
    with pytest.raises(KeyError, match="already exists"):
        net.register_parameter("forward", nn.Parameter(gpugrad.ones(1)))
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        net.nope


def test_train_eval_propagate():
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Dropout()))
    assert net.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_zero_grad_set_to_none_both_ways():
    net = Net()
    net(gpugrad.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any().item() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_round_trip():
    gpugrad.manual_seed(0)
    a, b = Net(), Net()
    x = gpugrad.randn(3, 3)
    assert not np.allclose(arr(a(x)), arr(b(x)))
    w = b.fc1.weight
    v = w._version
    assert repr(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    assert b.fc1.weight is w and w._version > v            # copied in place
    np.testing.assert_array_equal(arr(a(x)), arr(b(x)))
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad and sd["fc1.weight"].grad_fn is None
    assert a.state_dict(keep_vars=True)["fc1.weight"] is a.fc1.weight


def test_load_state_dict_strict_errors():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    sd["extra"] = gpugrad.zeros(1)
    del sd["bias"]
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in '
                            'state_dict: "bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    sd = m.state_dict()
    sd["weight"] = gpugrad.zeros(3, 2)
    for strict in (True, False):
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd, strict=strict)
        assert str(e.value) == (
            "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
            "param with shape gpugrad.Size([3, 2]) from checkpoint, the shape in current model "
            "is gpugrad.Size([2, 2]).")


def test_load_state_dict_casts_dtype():
    m = nn.Linear(2, 2)
    src = nn.Linear(2, 2).double()
    m.load_state_dict(src.state_dict())
    assert m.weight.dtype == gpugrad.float32
    np.testing.assert_allclose(arr(m.weight), arr(src.weight), rtol=1e-6)


def test_layer_reprs():
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MSELoss()) == "MSELoss()"


def test_to_dtype_and_device_keep_parameter_objects():
    net = Net()
    net(gpugrad.randn(2, 3)).sum().backward()
    w = net.fc1.weight
    assert net.to(gpugrad.float64) is net
    assert net.fc1.weight is w and w.dtype == gpugrad.float64 and w.grad.dtype == gpugrad.float64
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert net.running.dtype == gpugrad.float64
    assert net(gpugrad.randn(2, 3, dtype=gpugrad.float64)).dtype == gpugrad.float64
    net.to("cpu").float()
    assert net.fc1.weight is w and w.dtype == gpugrad.float32 and w.device.type == "cpu"
    with pytest.raises(TypeError, match="only accepts floating point"):
        net.to(gpugrad.int64)


def test_deepcopy_gives_independent_parameters():
    net = Net()
    twin = copy.deepcopy(net)
    assert isinstance(twin.fc1.weight, nn.Parameter)
    with gpugrad.no_grad():
        twin.fc1.weight.zero_()
    assert arr(net.fc1.weight).any()


def test_requires_grad_and_get_submodule():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    assert net.get_submodule("fc2") is net.fc2
    assert net.get_parameter("fc2.bias") is net.fc2.bias


def test_data_parallel_without_gpu_calls_the_module():
    lin = nn.Linear(2, 3)
    dp = nn.DataParallel(lin)
    x = gpugrad.randn(4, 2)
    if not gpugrad.cuda.is_available():
        assert dp.device_ids == [] and dp.module is lin
        np.testing.assert_array_equal(to_numpy(dp(x)), to_numpy(lin(x)))
    assert repr(dp) == ("DataParallel(\n  (module): Linear(in_features=2, out_features=3, "
                        "bias=True)\n)")
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
