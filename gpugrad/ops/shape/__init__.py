"""Shape ops: views and reshapes, joining and splitting, stacking helpers, diagonals, triangles,
flips and repeats."""
