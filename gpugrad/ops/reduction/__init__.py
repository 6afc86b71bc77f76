"""Reductions: sums and moments, extrema, scans, sorting, softmax, histograms, differences
and integrals."""
