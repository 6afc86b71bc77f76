"""``gpugrad.backends``: PyTorch's backend switches (``torch.backends.cudnn.benchmark = True``
...). gpugrad has no cuDNN, MPS or oneDNN paths: the flags are kept so that scripts setting
and reading them run, and change nothing; ``is_available()`` answers for gpugrad (False
where gpugrad has no such backend)."""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
