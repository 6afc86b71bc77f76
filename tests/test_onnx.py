"""torch.onnx: gpugrad has no exporter, and says so."""
from __future__ import annotations

import pytest

import gpugrad
import gpugrad.nn as nn
import gpugrad.onnx


def test_export_says_there_is_no_exporter(tmp_path):
    with pytest.raises(NotImplementedError, match="^gpugrad has no ONNX exporter"):
        gpugrad.onnx.export(nn.Linear(2, 2), (gpugrad.randn(1, 2),), str(tmp_path / "m.onnx"))
    assert not (tmp_path / "m.onnx").exists()
    assert gpugrad.onnx.is_in_onnx_export() is False
