"""The public namespace of gpugrad as ``import gpugrad as torch`` code sees it.

``python tests/public_api.py > tests/data/public_api.txt`` records it; ``test_public_api.py``
checks the tree against the record, so a change of layout that drops or adds a public name fails
until the record is updated on purpose. Modules are left out: which implementation modules a
package happens to have imported is layout, not API (PyTorch-facing subpackages are checked by
name in the test).
"""
from __future__ import annotations

import importlib
import types

# served by ``gpugrad.__getattr__`` on first use, so absent from ``dir(gpugrad)``
LAZY = ("save", "load", "selu", "celu", "prelu", "group_norm", "cosine_similarity",
        "pairwise_distance", "adaptive_avg_pool1d", "adaptive_max_pool1d", "conv1d", "conv2d",
        "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
        "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d", "pixel_shuffle",
        "pixel_unshuffle", "dropout", "alpha_dropout", "feature_alpha_dropout", "bilinear",
        "channel_shuffle", "hardshrink", "rrelu", "threshold", "pdist", "layer_norm", "rms_norm")
NAMESPACES = ("gpugrad", "gpugrad.nn", "gpugrad.nn.functional", "gpugrad.optim",
              "gpugrad.linalg", "gpugrad.special")


def public_names() -> list[str]:
    """One line per public name: ``<namespace>.<name>``, and ``Tensor.<name>`` for methods."""
    import gpugrad
    for sub in ("nn", "optim", "cuda", "utils", "viz", "kernels", "datasets", "func",
                "distributions", "amp", "profiler", "backends"):
        getattr(gpugrad, sub)    # the lazily loaded subpackages, as a user's first use loads them
    lines = []
    for ns in NAMESPACES:
        mod = importlib.import_module(ns)
        for name in dir(mod):
            if (name.startswith("_") or name == "annotations"
                    or isinstance(getattr(mod, name), types.ModuleType)):
                continue
            lines.append(f"{ns}.{name}")
    lines += [f"gpugrad.{name}" for name in LAZY if not isinstance(getattr(gpugrad, name),
                                                                  types.ModuleType)]
    lines += [f"Tensor.{name}" for name in dir(gpugrad.Tensor)
              if not name.startswith("_") or (name.startswith("__") and name.endswith("__"))]
    return sorted(set(lines))


if __name__ == "__main__":
    print("\n".join(public_names()))
