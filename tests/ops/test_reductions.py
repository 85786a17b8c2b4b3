"""Reductions, scans, statistics and norms against numpy float64, PyTorch (dev-only) and finite differences."""
from op_cases import reductions
from op_harness import make_tests

test_forward, test_grad = make_tests(reductions.CASES)
