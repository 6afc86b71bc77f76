"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict. Each
registers what it holds, so parameters(), state_dict() and to() reach it. Also the deprecated
``Container``."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict

from ..parameter import Parameter
from .module import Module, _addindent


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... kept in order."""

    def _index(self, idx):
        n = len(self._modules)
        idx = operator.index(idx)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def _renumber(self, mods):
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._sliced(list(self._modules.items())[idx])
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx, module):
        self.add_module(list(self._modules)[self._index(idx)], module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        del mods[idx if isinstance(idx, slice) else self._index(idx)]
        self._renumber(mods)   # PyTorch keeps the keys 0..n-1

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        n = len(mods)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        mods.insert(index, module)
        self._renumber(mods)
        return self


class Sequential(_ModuleSequence):
    """Runs its modules in order: ``Sequential(a, b)(x) == b(a(x))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def _sliced(self, items):
        return Sequential(OrderedDict(items))

    def pop(self, key):
        m = self[key]
        del self[key]
        return m

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and "
                            f"{type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for "
                             f"{type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other):
        mods = list((self * other)._modules.values())
        self._renumber(mods)
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of modules, each registered (no forward of its own)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _sliced(self, items):
        return ModuleList(m for _, m in items)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def pop(self, index):
        m = self[index]
        del self[index]
        return m

    def __repr__(self):
        """PyTorch's layout, runs of equal children collapsed: ``(0-2): 3 x ReLU()``."""
        lines, mods = [], [_addindent(repr(m), 2) for m in self._modules.values()]
        i = 0
        while i < len(mods):
            j = i
            while j + 1 < len(mods) and mods[j + 1] == mods[i]:
                j += 1
            lines.append(f"({i}): {mods[i]}" if i == j else f"({i}-{j}): {j - i + 1} x {mods[i]}")
            i = j + 1
        body = "\n  " + "\n  ".join(lines) + "\n" if lines else ""
        return f"{self._get_name()}({body})"


class ModuleDict(Module):
    """A dict of modules, each registered under its key (insertion order kept)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        m = self._modules[key]
        del self._modules[key]
        return m

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m


class ParameterList(Module):
    """A list of parameters, registered as "0", "1", ... (tensors are wrapped in Parameter)."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def _index(self, idx):
        n = len(self._parameters)
        idx = operator.index(idx)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[self._index(idx)]

    def __setitem__(self, idx, value):
        self.register_parameter(self._index(idx), _as_parameter(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):   # PyTorch's: the dtype and size of each
        return "\n".join(f"  ({k}): Parameter containing: [gpugrad.{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for k, p in self._parameters.items())


class ParameterDict(Module):
    """A dict of parameters, each registered under its key (tensors are wrapped)."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters):
        """Keys of a plain dict are added in sorted order (an OrderedDict's, a ParameterDict's
        or pairs' in theirs), as PyTorch does."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif hasattr(parameters, "items"):
            items = sorted(parameters.items())
        else:
            items = parameters
        for key, v in items:
            self[key] = v

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        p = self._parameters[key]
        del self._parameters[key]
        return p

    def popitem(self):
        key = next(reversed(self._parameters))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        self._parameters.clear()

    def copy(self):
        return ParameterDict(OrderedDict(self._parameters.items()))

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def extra_repr(self):   # PyTorch's: the legacy type name and size of each
        return "\n".join(
            f"  ({k}): Parameter containing: [{p.type()} of size {'x'.join(map(str, p.shape))}]"
            for k, p in self._parameters.items())


def _as_parameter(value):
    return value if value is None or isinstance(value, Parameter) else Parameter(value)


class Container(Module):
    """Deprecated: a Module holding the modules given as keywords."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)
