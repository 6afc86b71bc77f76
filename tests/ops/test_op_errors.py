"""Bad input to everyday tensor ops fails as in PyTorch (same exception type, same message), and
in-place results the tensor cannot hold are refused. Expected messages are literal (from
PyTorch 2.13); a final test replays the same snippets under PyTorch (skipped without it)."""
from __future__ import annotations

import re

import pytest

import gpugrad
from tests.ops._tensors import values


def raises(kind, message, call):
    """``call()`` raises exactly ``kind`` with exactly ``message``."""
    with pytest.raises(kind, match="^" + re.escape(message) + "$") as info:
        call()
    assert type(info.value) is kind


F = gpugrad.ones
I64 = gpugrad.int64


# -- each case: (snippet evaluated with ``torch`` bound to the library, type, message) -------------
ERRORS = [
    # matrix products
    ("torch.ones(2, 3) @ torch.ones(4, 5)", RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    ("torch.ones(2, 2, 3) @ torch.ones(3, 3, 5)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("torch.ones(2, 5, 2, 3) @ torch.ones(3, 5, 3, 5)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("torch.ones(2, 3, 2, 3) @ torch.ones(3, 4, 5)", RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 3] but got: [6, 4]."),
    ("torch.ones(2, 2, 3) @ torch.ones(4)", RuntimeError,
     "size mismatch, got input (4), mat (4x3), vec (4)"),
    ("torch.ones(2, 6, 2, 3) @ torch.ones(4)", RuntimeError,
     "size mismatch, got input (24), mat (24x3), vec (4)"),
    ("torch.ones(4) @ torch.ones(2, 3, 5)", RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3]."),
    ("torch.ones(4) @ torch.ones(2, 6, 3, 5)", RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [12, 4] but got: [12, 3]."),
    ("torch.mv(torch.ones(2, 3), torch.ones(3, 1))", RuntimeError,
     "vector + matrix @ vector expected, got 1, 2, 2"),
    ("torch.mv(torch.ones(2), torch.ones(2))", RuntimeError,
     "vector + matrix @ vector expected, got 1, 1, 1"),
    ("torch.mv(torch.ones(2, 2, dtype=torch.float64), torch.ones(2))", RuntimeError,
     "addmv input tensors must have the same dtype, but got Float, Double, and Float"),
    ("torch.dot(torch.ones(3), torch.ones(3, dtype=torch.float64))", RuntimeError,
     "dot : expected both vectors to have same dtype, but found Float and Double"),
    ("torch.mm(torch.ones(2, 3), torch.ones(3, 2, dtype=torch.float64))", RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    ("torch.mm(torch.ones(2, 3, dtype=torch.int64), torch.ones(3, 2))", RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: long int != float"),
    ("torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float16))", RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != c10::Half"),
    ("torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.uint8))", RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != unsigned char"),
    ("torch.bmm(torch.ones(2, 2, 2, dtype=torch.float64), torch.ones(2, 2, 2))", RuntimeError,
     "expected scalar type Double but found Float"),
    ("torch.ones(2, 2, dtype=torch.bool) @ torch.ones(2, 2, dtype=torch.bool)",
     NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    ("torch.dot(torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool))",
     NotImplementedError, "\"dot\" not implemented for 'Bool'"),
    # broadcasting
    ("torch.ones(2) == torch.ones(3)", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("torch.ones(2, 3) < torch.ones(4)", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ("torch.broadcast_tensors(torch.ones(2, 3), torch.ones(5, 1, 4))", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 2"),
    # cat / stack
    ("torch.cat([])", ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    ("torch.cat(torch.ones(2, 3))", TypeError,
     "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
    ("torch.stack(torch.ones(2, 3))", TypeError,
     "stack(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
    ("torch.cat([torch.ones(2, 3), torch.ones(3)])", RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    ("torch.cat([torch.ones(0), torch.ones(2, 3), torch.ones(3)])", RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    ("torch.cat([torch.ones(2, 3), torch.tensor(1.)])", RuntimeError,
     "zero-dimensional tensor (at position 1) cannot be concatenated"),
    ("torch.cat([torch.ones(2, 3), torch.ones(2, 4)])", RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
     "tensor number 1 in the list."),
    ("torch.cat([torch.ones(2, 3, 4), torch.ones(2, 3, 4), torch.ones(3, 5, 5)], dim=1)",
     RuntimeError, "Sizes of tensors must match except in dimension 1. Expected size 2 but got "
     "size 3 for tensor number 2 in the list."),
    ("torch.vstack([torch.ones(2, 3), torch.ones(2, 4)])", RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
     "tensor number 1 in the list."),
    ("torch.stack([torch.ones(2, 3), torch.ones(2, 3), torch.ones(3)])", RuntimeError,
     "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3] at entry 2"),
    # view / reshape / expand / permute / flatten
    ("torch.ones(2, 3).reshape(-2, 3)", RuntimeError,
     "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    ("torch.ones(2, 3).expand(2, 4)", RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
     "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"),
    ("torch.ones(2, 3).expand_as(torch.ones(5, 2, 4))", RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
     "dimension 2.  Target sizes: [5, 2, 4].  Tensor sizes: [2, 3]"),
    ("torch.ones(3).expand(-1, 3)", RuntimeError,
     "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
    ("torch.ones(2, 3).expand(3)", RuntimeError,
     "expand(gpugrad.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be "
     "greater or equal to the number of dimensions in the tensor (2)"),
    ("torch.ones(2, 3).permute(0, 5)", IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ("torch.ones(2, 3).permute(1, -1)", RuntimeError,
     "permute(): duplicate dims are not allowed."),
    ("torch.tensor(1.).transpose(0, 1)", IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ("torch.ones(2, 3).flatten(2)", IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("torch.ones(2, 3, 4).flatten(2, 1)", RuntimeError,
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    ("torch.ones(3).mT", RuntimeError,
     "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    # indexing
    ("torch.tensor(1.)[0]", IndexError,
     "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
     "to convert a 0-dim tensor to a number"),
    ("torch.tensor(1.)[0:1]", IndexError, "slice() cannot be applied to a 0-dim tensor."),
    ("torch.tensor(1.)[-1]", IndexError, "index -1 is out of bounds for dimension 0 with size 0"),
    ("torch.tensor(1.)[torch.tensor(0)]", IndexError,
     "too many indices for tensor of dimension 0"),
    ("torch.ones(3, 3).gather(1, torch.zeros(4, 1, dtype=torch.long))", RuntimeError,
     "Size does not match at dimension 0 expected index [4, 1] to be no larger than self [3, 3] "
     "apart from dimension 1"),
    # narrow / split / chunk / repeat
    ("torch.tensor(1.).narrow(0, 0, 1)", RuntimeError,
     "narrow() cannot be applied to a 0-dim tensor."),
    ("torch.ones(3).narrow(0, 0, -1)", RuntimeError, "narrow(): length must be non-negative."),
    ("torch.ones(3).narrow(0, 4, 0)", IndexError,
     "start out of range (expected to be in range of [-3, 3], but got 4)"),
    ("torch.ones(3).narrow(0, -1, 2)", RuntimeError,
     "start (2) + length (2) exceeds dimension size (3)."),
    ("torch.ones(5).split(0)", RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 5"),
    ("torch.ones(5).split(-1)", RuntimeError,
     "split expects split_size be non-negative, but got split_size=-1"),
    ("torch.tensor(1.).split(1)", RuntimeError, "split expects at least a 1-dimensional tensor"),
    ("torch.ones(5).chunk(0)", RuntimeError,
     "chunk expects `chunks` to be greater than 0, got: 0"),
    ("torch.ones(2, 3).repeat(2, -1)", RuntimeError,
     "Trying to create tensor with negative dimension -3: [4, -3]"),
    # conversion to Python numbers
    ("float(torch.ones(3))", ValueError,
     "only one element tensors can be converted to Python scalars"),
    ("int(torch.ones(3))", ValueError,
     "only one element tensors can be converted to Python scalars"),
    ("bool(torch.ones(0))", RuntimeError, "Boolean value of Tensor with no values is ambiguous"),
    ("bool(torch.ones(3))", RuntimeError,
     "Boolean value of Tensor with more than one value is ambiguous"),
    # requires_grad on integer tensors
    ("torch.tensor([1, 2], requires_grad=True)", RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("torch.arange(3, requires_grad=True)", RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("torch.zeros_like(torch.tensor([1]), requires_grad=True)", RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("setattr(torch.tensor([1, 2]), 'requires_grad', True)", RuntimeError,
     "only Tensors of floating point and complex dtype can require gradients"),
    # bool and integer arithmetic
    ("torch.tensor([True]) - torch.tensor([True])", RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
     "`logical_xor()` operator instead."),
    ("torch.tensor([True]) - 1", RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
     "invert a mask, use the `~` or `logical_not()` operator instead."),
    ("1 - torch.tensor([True])", RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
     "invert a mask, use the `~` or `logical_not()` operator instead."),
    ("torch.tensor([1.]) - True", RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
     "invert a mask, use the `~` or `logical_not()` operator instead."),
    ("-torch.tensor([True])", RuntimeError,
     "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
     "a mask, use the `~` or `logical_not()` operator instead."),
    ("~torch.tensor([0.5])", TypeError,
     "~ (operator.invert) is only implemented on integer and Boolean-type tensors"),
    ("torch.tensor([1.]) & torch.tensor([1.])", NotImplementedError,
     "\"bitwise_and_cpu\" not implemented for 'Float'"),
    ("torch.tensor([1]) | 1.5", NotImplementedError,
     "\"bitwise_or_cpu\" not implemented for 'Float'"),
    ("torch.div(torch.tensor([1]), 2, rounding_mode='round')", RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    ("torch.where(torch.tensor([1, 0]), 1., 0.)", RuntimeError,
     "where expected condition to be a boolean tensor, but got a tensor with dtype Long"),
    ("torch.tensor([1, 4]).clamp()", RuntimeError,
     "torch.clamp: At least one of 'min' or 'max' must not be None"),
    # creation
    ("torch.zeros(-1)", RuntimeError, "zeros: Dimension size must be non-negative."),
    ("torch.ones(2, -3)", RuntimeError,
     "Trying to create tensor with negative dimension -3: [2, -3]"),
    ("torch.empty((3, -2))", RuntimeError,
     "Trying to create tensor with negative dimension -2: [3, -2]"),
    ("torch.zeros(2.5)", TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, not float"),
    ("torch.zeros((2.5,))", TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, but found element of type "
     "float at pos 0"),
    ("torch.ones(2, 2.0)", TypeError,
     "ones(): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
     "tuple of ints,but got float\""),
    ("torch.full(2, 3)", TypeError,
     "full(): argument 'size' (position 1) must be tuple of ints, not int"),
    ("torch.full((-1,), 2.)", RuntimeError,
     "Trying to create tensor with negative dimension -1: [-1]"),
    ("torch.linspace(3, 10, -1)", RuntimeError, "number of steps must be non-negative"),
    ("torch.arange(0, 1, 0.3, dtype=torch.int64)", ValueError, "step must be nonzero"),
    ("torch.tensor([[1, 2], [3]])", ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
    ("torch.tensor([[1, 2], 3])", TypeError, "not a sequence"),
]


def _run(snippet):
    return lambda: eval(snippet, {"torch": gpugrad})


@pytest.mark.parametrize("snippet,kind,message", ERRORS, ids=[c[0] for c in ERRORS])
def test_error_matches_pytorch(snippet, kind, message):
    raises(kind, message, _run(snippet))


def test_requires_grad_method_on_integer_tensor():
    # PyTorch says "Only" on the first call in a process and "only" after: either case matches
    with pytest.raises(RuntimeError, match="^(?i:only) Tensors of floating point dtype can "
                                           "require gradients$"):
        gpugrad.tensor([1, 2]).requires_grad_()
    assert gpugrad.tensor([1, 2]).requires_grad_(False).requires_grad is False


# -- in-place ops whose result the tensor cannot hold ------------------------------------------
@pytest.mark.parametrize("snippet,message", [
    ("a += 1.5", "result type Float can't be cast to the desired output type Long"),
    ("a.mul_(1.5)", "result type Float can't be cast to the desired output type Long"),
    ("a /= 2", "result type Float can't be cast to the desired output type Long"),
    ("a.div_(2)", "result type Float can't be cast to the desired output type Long"),
    ("a.sub_(torch.tensor(0.5))",
     "result type Float can't be cast to the desired output type Long"),
    ("a.add_(torch.tensor([1.5, 1], dtype=torch.float64))",
     "result type Double can't be cast to the desired output type Long"),
    ("b += 1.5", "result type Float can't be cast to the desired output type Int"),
    ("m.add_(1)", "result type Long can't be cast to the desired output type Bool"),
    ("f += torch.ones(2, 3)", "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ("f.add_(torch.ones(2))",
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
])
def test_inplace_result_that_cannot_be_written(snippet, message):
    scope = {"torch": gpugrad, "a": gpugrad.tensor([1, 2]),
             "b": gpugrad.tensor([1, 2], dtype=gpugrad.int32), "m": gpugrad.tensor([True]),
             "f": gpugrad.ones(3)}
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        exec(snippet, scope)
    assert values(scope["a"]) == [1, 2] and values(scope["f"]) == [1.0, 1.0, 1.0]


def test_inplace_results_that_can_be_written():
    a = gpugrad.tensor([1], dtype=gpugrad.int32)
    a.add_(gpugrad.tensor([5]))            # int64 into int32: same kind, allowed
    assert a.dtype == gpugrad.int32 and values(a) == [6]
    f = gpugrad.tensor([1.0])
    f.mul_(gpugrad.tensor([5.0], dtype=gpugrad.float64))
    assert f.dtype == gpugrad.float32 and values(f) == [5.0]
    i = gpugrad.ones(3, dtype=I64)
    i[0] = 2.7                             # assignment truncates, as in PyTorch
    assert values(i) == [2, 1, 1]
    i.fill_(2.7)
    assert values(i) == [2, 2, 2]


def test_setitem_errors():
    def put(a, index, v):
        a[index] = v
    raises(IndexError, "index 5 is out of bounds for dimension 0 with size 3",
           lambda: put(F(3), 5, 1.0))
    raises(RuntimeError, "The expanded size of the tensor (3) must match the existing size (2) at "
           "non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [2]",
           lambda: put(F(3), slice(None), F(2)))
    raises(RuntimeError, "expand(gpugrad.FloatTensor{[2, 4]}, size=[4]): the number of sizes "
           "provided (1) must be greater or equal to the number of dimensions in the tensor (2)",
           lambda: put(F(3, 4), 0, F(2, 4)))
    raises(RuntimeError, "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to "
           "indexing result of shape [2, 4]",
           lambda: put(F(3, 4), gpugrad.tensor([0, 1]), F(3, 4)))


def test_matmul_errors_keep_gradients_working():
    x = gpugrad.ones(2, 3, 4, requires_grad=True)
    y = x @ gpugrad.ones(4)
    y.sum().backward()
    assert x.grad.shape == (2, 3, 4)


# -- PyTorch as the oracle ---------------------------------------------------------------------
def test_errors_against_pytorch():
    torch = pytest.importorskip("torch")
    for snippet, kind, message in ERRORS:
        with pytest.raises(kind) as info:
            eval(snippet, {"torch": torch})
        expected = str(info.value).replace("torch.FloatTensor", "gpugrad.FloatTensor")
        assert expected == message, snippet
