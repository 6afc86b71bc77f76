"""A module's state dict: ``state_dict`` / ``load_state_dict``, the extra state a module may add
to it, and the four kinds of state-dict hooks, in PyTorch's order and with its messages.

``Module`` inherits these from ``StateDictMixin``; the per-module work is done by
``_save_to_state_dict`` and ``_load_from_state_dict``, which subclasses may override as they
would in PyTorch.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ...tensor import Tensor
from ..parameter import Parameter

EXTRA_STATE_KEY_SUFFIX = "_extra_state"

_POST_HOOK_RETURNED = (
    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return "
    "new values, if incompatible_keys need to be modified, it should be done inplace.")


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _add(hooks, entry):
    hooks.append(entry)
    return RemovableHandle(hooks, entry)


class StateDictMixin:
    """State-dict methods of ``Module``. The hook lists live on each instance (``__init__``)."""

    # -- extra state --------------------------------------------------------------------------
    def get_extra_state(self):
        """Any picklable object to store under ``prefix + '_extra_state'`` in the state dict.
        Only called when a subclass defines it (with ``set_extra_state`` to read it back)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        """Receives what ``get_extra_state`` returned, from ``load_state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def _has_own(self, name):
        return getattr(type(self), name, None) is not getattr(StateDictMixin, name)

    # -- hooks --------------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars) -> None`` runs before the module's entries are
        added to the state dict."""
        return _add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` runs after the module
        and its children added their entries; it may change ``state_dict`` in place."""
        try:
            hook._from_public_api = True   # the private registration refuses it from now on
        except AttributeError:
            pass
        return _add(self._state_dict_hooks, (hook, True))

    def _register_state_dict_hook(self, hook):
        """Like ``register_state_dict_post_hook``, but a non-None return value replaces the
        state dict (respected only for the module ``state_dict()`` was called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook")
        return _add(self._state_dict_hooks, (hook, False))

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None`` runs before the module's entries are loaded;
        ``state_dict`` holds the keys under the module's prefix and may be changed."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """As ``register_load_state_dict_pre_hook``; without ``with_module`` the hook is not
        given the module."""
        return _add(self._load_state_dict_pre_hooks, (hook, with_module))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` runs once the module and its children are
        loaded; it may edit ``incompatible_keys.missing_keys`` / ``.unexpected_keys`` in place,
        which ``strict`` then judges."""
        return _add(self._load_state_dict_post_hooks, hook)

    # -- saving -------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own parameters, persistent buffers and extra state (not its
        children's)."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        skip = self._non_persistent_buffers_set
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_own("get_extra_state"):
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Parameters, persistent buffers and extra state of the whole tree, keyed by dotted
        name, as an ``OrderedDict`` whose ``_metadata`` maps each module's prefix to
        ``{'version': cls._version}``."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead.",
                          FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks:
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook, public in list(self._state_dict_hooks):
            out = hook(self, destination, prefix, local_metadata)
            if public:
                if out is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif out is not None:
                destination = out
        return destination

    # -- loading ------------------------------------------------------------------------------
    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own entries (not its children's) from ``state_dict``, recording
        what is missing, unexpected or wrong in the three lists."""
        for hook, with_module in list(self._load_state_dict_pre_hooks):
            args = (state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                    error_msgs)
            if with_module:
                hook(self, *args)
            else:
                hook(*args)
        skip = self._non_persistent_buffers_set
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items() if v is not None and k not in skip)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, cur in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            v = state_dict[key]
            if not isinstance(v, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "gpugrad.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(v)}")
                continue
            if cur.ndim == 0 and v.shape == (1,):
                v = v[0]   # checkpoints of old PyTorch stored scalars as one-element vectors
            if v.shape != cur.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{v.shape} from checkpoint, the shape in current model is "
                                  f"{cur.shape}.")
                continue
            try:
                with no_grad():
                    if not assign:
                        cur.copy_(v.to(device=cur.device, dtype=cur.dtype))
                    elif isinstance(cur, Parameter):
                        if isinstance(v, Parameter):
                            v.requires_grad_(cur.requires_grad)
                        else:
                            v = Parameter(v, requires_grad=cur.requires_grad)
                        setattr(self, name, v)
                    else:
                        setattr(self, name, v)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {cur.size()} and whose dimensions in the checkpoint are {v.size()}, "
                    f"an exception occurred : {ex.args}.")
        extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
        if self._has_own("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            n = len(prefix)
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head, dot, _ = key[n:].partition(".")
                    if head not in (self._modules if dot else local):
                        unexpected_keys.append(key)

    def _load(self, sd, prefix, missing, errors, unexpected, ctx):
        """Load this module, then each child from the entries under its prefix, then run this
        module's load post-hooks. ``ctx``: (the state dict's ``_metadata`` or None, assign)."""
        metadata, assign = ctx
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        self._load_from_state_dict(sd, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in self._modules.items():
            if child is not None:
                sub = prefix + name + "."
                child._load({k: v for k, v in sd.items() if k.startswith(sub)}, sub, missing,
                            errors, unexpected, ctx)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for hook in list(self._load_state_dict_post_hooks):
            if hook(self, incompatible) is not None:
                raise AssertionError(_POST_HOOK_RETURNED)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters, buffers and extra state from ``state_dict`` into the tree (in
        place; with ``assign``, the checkpoint's tensors replace them, keeping each
        parameter's ``requires_grad``). ``strict``: missing or unexpected keys are errors.
        Returns ``(missing_keys, unexpected_keys)``."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        for k in state_dict:
            if not isinstance(k, str):
                raise TypeError(f"state_dict keys name parameters and buffers and must be "
                                f"strings, got the {type(k).__name__} key {k!r}")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)   # hooks may edit the copy
        if metadata is not None:
            state_dict._metadata = metadata
        self._load(state_dict, "", missing, errors, unexpected, (metadata, assign))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)
