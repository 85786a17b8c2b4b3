"""The complex rows' sample cases against numpy float64, PyTorch (dev-only) and finite
differences (tests/ops/op_cases/complex.py)."""
from op_cases import complex as complex_cases
from op_harness import make_tests

test_forward, test_grad = make_tests(complex_cases.CASES)
