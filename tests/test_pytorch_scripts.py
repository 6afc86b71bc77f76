"""Training scripts written for PyTorch (tests/scripts/*.py, ``import torch``) run unchanged
under gpugrad, with PyTorch's losses, step by step, from the same initial weights and the same
random draws (see tests/scripts/harness.py)."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

from tests.scripts.harness import run_both

SCRIPTS = pathlib.Path(__file__).parent / "scripts"


@pytest.mark.parametrize("name", ["gpt", "char_rnn", "mnist", "vae", "word_language_model"])
def test_script_losses_match_pytorch(name):
    torch = pytest.importorskip("torch")
    theirs, ours = run_both(SCRIPTS / f"{name}.py")
    assert len(ours) == len(theirs) > 0
    # float32 on both sides: the steps agree to rounding, not bit for bit
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert sys.modules["torch"] is torch    # the alias is gone once the script has run
