"""The NCCL backend (placeholder until written)."""
from __future__ import annotations


def available() -> bool:
    return False
