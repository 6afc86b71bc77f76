"""Hooks on the values a graph saves for backward: ``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks`` (PyTorch's ``torch.autograd.graph`` names and messages).

While ``saved_tensors_hooks(pack, unpack)`` is active, every tensor a recorded node saves
(an op's input or output, a custom Function's ``ctx.save_for_backward``) is handed to
``pack`` as the node is recorded, and the node keeps only what ``pack`` returns. Backward (or
``grad_fn._saved_<name>``, ``ctx.saved_tensors``) calls ``unpack`` on it each time the value is
read. Offloading to the host (``save_on_cpu``), compressing, or recomputing saved values all
go through this. As in PyTorch, the innermost active pair applies, and a value saved through
hooks is not checked for in-place changes (what unpack returns is what backward uses).
"""
from __future__ import annotations

stack: list = []          # active (pack, unpack) pairs, innermost last
_disabled: list = []      # messages of active disable_saved_tensors_hooks blocks

PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook.")


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """``with saved_tensors_hooks(pack_hook, unpack_hook): ...``: ``pack_hook(tensor) -> any``
    runs when a node saves ``tensor``; ``unpack_hook(packed) -> Tensor`` when backward reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        stack.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Keep saved tensors in host memory until backward needs them, then move each back to the
    device it came from (trades GPU memory for transfers)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801
    """Within the block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``
    (for code whose saved values must stay as they are)."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _disabled.pop()


class _Packed:
    """What ``pack`` returned for one saved tensor, with the ``unpack`` that restores it."""
    __slots__ = ("value", "unpack")

    def __init__(self, value, unpack):
        self.value, self.unpack = value, unpack

    def tensor(self):
        from ..tensor import Tensor
        out = self.unpack(self.value)
        if not isinstance(out, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(out).__name__}")
        return out


class PackedSaved(tuple):
    """A node's saved values when hooks packed some of them (the engine unpacks on use)."""
    __slots__ = ()

    def arrays(self) -> tuple:
        """The values an op's backward reads: each packed tensor unpacked to its array."""
        return tuple(v.tensor()._data if v.__class__ is _Packed else v for v in self)

    def tensors(self) -> tuple:
        """The values a custom Function's ``ctx.saved_tensors`` returns."""
        return tuple(v.tensor() if v.__class__ is _Packed else v for v in self)


NO_CHECK = None   # set below: a version box nothing ever bumps


def pack(node, inputs, output) -> None:
    """Pass each tensor ``node`` saved through the innermost ``pack`` hook. ``inputs``: the
    arguments of the op (or, for a custom Function, None: its saved values are tensors);
    ``output``: the op's output tensor."""
    from ..tensor import Version
    global NO_CHECK
    if NO_CHECK is None:
        NO_CHECK = Version()
    pack_hook, unpack_hook = stack[-1]
    saved, versions = list(node._saved), list(node._versions or ())
    for k, entry in enumerate(versions):
        if entry is None:
            continue
        pos = entry[2]
        t = saved[k] if inputs is None else output if pos == -1 else inputs[pos]
        if not hasattr(t, "_vbox"):
            continue   # one output of several: kept as it is
        box = t._vbox or t._version_box()
        before = box.v
        saved[k] = _Packed(pack_hook(t), unpack_hook)
        if box.v != before:
            raise RuntimeError(PACK_INPLACE)
        versions[k] = (NO_CHECK, NO_CHECK.v, pos)   # keeps the position for double backward
    node._saved = PackedSaved(saved)
    node._versions = tuple(versions)
