"""Elementwise ops against numpy float64, PyTorch (dev-only) and finite differences."""
from op_cases import elementwise
from op_harness import make_tests

test_forward, test_grad = make_tests(elementwise.CASES)
