"""Views, indexing, joining, sorting and counting against numpy float64, PyTorch (dev-only) and finite differences."""
import pytest

from op_cases import shape_indexing
from op_harness import check_forward, check_grad

FORWARD = [(c, d) for c in shape_indexing.CASES for d in c.dtypes]
GRAD = [c for c in shape_indexing.CASES if c.grad and any(d.startswith(("float", "bfloat"))
                                                        for d in c.dtypes)]


@pytest.mark.parametrize("case,dtype", FORWARD, ids=[f"{c.id}-{d}" for c, d in FORWARD])
def test_forward(case, dtype):
    check_forward(case, dtype)


@pytest.mark.parametrize("case", GRAD, ids=[c.id for c in GRAD])
def test_grad(case):
    check_grad(case)
