"""``gpugrad.onnx``: the names scripts reach for around an ONNX export. gpugrad has no ONNX
exporter: ``export`` says so instead of writing nothing; ``is_in_onnx_export`` (read inside
``forward`` to take an export-friendly path) is always False."""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, **kwargs):
    raise NotImplementedError(
        "gpugrad has no ONNX exporter: torch.onnx.export is not supported. Save the weights "
        "with torch.save(model.state_dict(), path) and export with PyTorch, which loads them.")


def is_in_onnx_export() -> bool:
    return False
