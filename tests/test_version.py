"""torch.version answers like a CPU PyTorch's (torch.distributed is tested in
tests/distributed/)."""
from __future__ import annotations

import re

import gpugrad


def test_version():
    assert gpugrad.version.__version__ == gpugrad.__version__ and gpugrad.version.hip is None
    cuda = gpugrad.version.cuda
    assert cuda is None or re.fullmatch(r"\d+\.\d+", cuda)
    if gpugrad.cuda.is_available():
        assert cuda is not None
