"""Composites whose complex branch once reached a name its module never imported (they
raised NameError): each equals PyTorch's on complex input."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

VALUES = np.array([[1 + 2j, -0.5 + 1j, 3 - 1j], [0.25 - 2j, 2 + 0.5j, -1 - 1j]],
                  dtype=np.complex64)

CASES = {
    "logsumexp": lambda lib, x: lib.logsumexp(x, dim=1),
    "vecdot": lambda lib, x: lib.linalg.vecdot(x, x.flip(0)),
    "cov": lambda lib, x: lib.cov(x),
    "corrcoef": lambda lib, x: lib.corrcoef(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_composite_matches_pytorch(name):
    ours = CASES[name](dt, dt.tensor(VALUES)).numpy()
    theirs = CASES[name](torch, torch.tensor(VALUES)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_each_tensor_method_has_one_definition():
    """Two op modules defining one Tensor method would let import order pick the winner
    (real-only `real`/`conj` once shadowed the complex ones): binding refuses that."""
    from dispatchtorch.ops import methods

    class Probe:
        __name__ = "dispatchtorch.ops._probe"
        METHODS = {"sum": lambda self: None}
    import sys
    sys.modules[Probe.__name__] = Probe()
    try:    # the refusal comes before any method is set, so Tensor stays as it was
        with pytest.raises(ImportError, match="Tensor.sum is defined by both"):
            methods.bind()
    finally:
        del sys.modules[Probe.__name__]
