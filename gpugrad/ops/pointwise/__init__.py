"""Elementwise ops, one module per kind: arithmetic, unary functions, binary functions,
clamp / maximum / where (minmax), comparisons, bitwise."""
