"""The rows added for PyTorch's wider op set against numpy float64, PyTorch (dev-only)
and finite differences."""
from op_cases import opset
from op_harness import make_tests

test_forward, test_grad = make_tests(opset.CASES)
