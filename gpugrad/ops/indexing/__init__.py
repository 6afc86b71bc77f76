"""Indexing ops: x[i] and x[i] = v, gather, scatter, masked ops."""
