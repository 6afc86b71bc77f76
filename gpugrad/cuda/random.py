"""The GPU's random stream (``gpugrad.cuda.manual_seed``, ``seed``, ``get_rng_state`` ...).

gpugrad's default generator draws on the GPU from a CuPy generator it creates lazily from its
seed; these functions reseed, read and restore that CuPy stream only (the CPU stream is left)."""
from __future__ import annotations

from .. import _backend
from .devices import _cp, _index, _need, device_count, is_available


def manual_seed(seed) -> None:
    """Seed the generators behind ``device='cuda'`` (the one default generator serves all)."""
    from .._creation import default_generator
    default_generator.manual_seed(seed)


manual_seed_all = manual_seed


_cuda_seed: dict = {"rng": None, "seed": None}


def _reseed_cuda(seed, initial) -> None:
    """Continue the GPU stream from ``seed``; ``initial_seed()`` answers ``initial``."""
    from .._creation import default_generator
    rng = _cp().random.default_rng(seed)
    default_generator._cp = rng
    _cuda_seed.update(rng=rng, seed=initial)


def seed() -> None:
    """Reseed the GPU stream with a random number (no-op without CUDA, as in PyTorch)."""
    if is_available():
        import numpy as np
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        _reseed_cuda(s, s)


seed_all = seed


def initial_seed() -> int:
    """The seed the GPU stream started from (``manual_seed``'s, or ``seed()``'s)."""
    _need()
    from .._creation import default_generator
    rng = default_generator._cp
    if rng is not None and rng is _cuda_seed["rng"]:
        return _cuda_seed["seed"]
    return default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The GPU stream's state as 8 bytes (a uint8 tensor): the seed of a CuPy generator that
    continues the stream. CuPy's generator state cannot be read back, so the stream is
    continued from a seed drawn from it (deterministic under ``manual_seed``)."""
    _backend._require_cuda(_backend.device("cuda", _index(device)))
    import numpy as np

    from .._creation import default_generator, tensor, uint8
    rng = default_generator._cp
    if rng is None:   # not used since manual_seed: the stream starts from the seed itself
        state = default_generator._seed
    else:
        state = int(rng.integers(2 ** 62))
        _reseed_cuda(state, initial_seed())
    return tensor(np.frombuffer(np.int64(state).tobytes(), np.uint8).copy(), dtype=uint8)


def get_rng_state_all() -> list:
    """One state per device (they share one generator, so the states are equal)."""
    if not is_available():
        return []
    state = get_rng_state()
    return [state.clone() for _ in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    """Restore a state from ``get_rng_state`` (no-op without CUDA, as in PyTorch)."""
    if not is_available():
        return
    import numpy as np

    from .._creation import uint8
    if getattr(new_state, "dtype", None) != uint8 or new_state.numel() != 8:
        raise RuntimeError("RNG state must be a torch.ByteTensor")
    state = int(np.frombuffer(new_state.cpu().numpy().tobytes(), np.int64)[0])
    _reseed_cuda(state, initial_seed())


def set_rng_state_all(new_states) -> None:
    for state in new_states:
        set_rng_state(state)
