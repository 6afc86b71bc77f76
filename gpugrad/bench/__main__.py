"""``python -m gpugrad.bench``: the same command as ``gpugrad bench``."""
import sys

from . import main

sys.exit(main() or 0)
