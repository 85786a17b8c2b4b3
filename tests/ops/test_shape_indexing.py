"""Views, indexing, joining, sorting and counting against numpy float64, PyTorch (dev-only) and finite differences."""
from op_cases import shape_indexing
from op_harness import make_tests

test_forward, test_grad = make_tests(shape_indexing.CASES)
