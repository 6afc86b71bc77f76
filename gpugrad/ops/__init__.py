"""Every differentiable op, one class each (see ``_op.Op``), in family packages: ``pointwise``,
``reduction``, ``shape``, ``indexing``, ``linalg``, ``special`` and ``nn``. Each module of a
family lists its op classes in ``OPS``; ``REGISTRY`` collects them by looping over the families,
so a new module or op needs no entry here.

Each module also declares its public names next to its functions (``gpugrad/_exports.py``):
once every family and the method modules beside them (conversion, creation, fills, random
fills, complex numbers, layout queries, storage) are imported, the loop at the end installs
every declared Tensor method, operator and in-place form on ``Tensor``."""
import importlib
import pkgutil

from .. import _exports, storage  # noqa: F401  (storage declares the memory queries)
from ..tensor import Tensor

# _op is the base; the others hold the Tensor methods that are not ops of a family, by concept
from . import _op, complex, conversion, creation, fill, layout, random  # noqa: F401


def _family_modules():
    """Every module of every family package, in name order (families, then their modules)."""
    for family in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg):
        package = importlib.import_module(f"{__name__}.{family}")
        for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            yield importlib.import_module(f"{package.__name__}.{m.name}")


REGISTRY = {cls.__name__: cls for m in _family_modules() for cls in m.OPS}

for _cls in REGISTRY.values():
    _op.specialise_run(_cls)
    # a family whose ops only move values (views, copies, indexing) declares MOVES_VALUES:
    # its ops keep bfloat16 as it is, where the others compute it in float32 (see _op.Op)
    if getattr(importlib.import_module(_cls.__module__.rpartition(".")[0]), "MOVES_VALUES",
               False):
        _cls.upcasts = False

# every declared method, operator and in-place form, on Tensor
for _name, _obj in _exports.METHODS.items():
    setattr(Tensor, _name, _obj)
