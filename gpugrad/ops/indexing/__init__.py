"""Indexing ops: x[i] and x[i] = v, gather, scatter, masked ops."""

# values are moved, never computed: bfloat16 inputs stay bfloat16 (ops/_op.py, Op.upcasts)
MOVES_VALUES = True
