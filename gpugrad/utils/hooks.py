"""``RemovableHandle``: what every ``register_*hook`` returns (PyTorch keeps it in
``torch.utils.hooks``). It imports nothing of gpugrad, so every layer may use it."""
from __future__ import annotations


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` takes the hook out again."""
    __slots__ = ("_list", "_fn")

    def __init__(self, hooks: list, fn):
        self._list, self._fn = hooks, fn

    def remove(self) -> None:
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
