"""Shape ops: views and reshapes, joining and splitting, stacking helpers, diagonals, triangles,
flips and repeats."""

# values are moved, never computed: bfloat16 inputs stay bfloat16 (ops/_op.py, Op.upcasts)
MOVES_VALUES = True
