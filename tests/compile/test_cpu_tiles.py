"""The CPU fused kernel over many tiles (regions larger than fusion.TILE, the last tile
partial, on one and two worker threads) gives eager's numbers bit for bit."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_cpu import fusion
from tests.compile.compile_helpers import _entries, _np


@pytest.mark.parametrize("shape", [(3, 7001), (7, 5, 3011)])
def test_a_region_of_many_tiles_equals_eager(shape, threads, monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)     # (shapes no other test fuses: kernels are cached)

    def f(x, y, z):
        # (amax: exact in any order; a sum's kernel picks its algorithm by size, so a
        # tile's sum and the whole tensor's may round differently)
        return (torch.exp(x * y + z) * x - y).relu().amax(-1) + torch.tanh(z).amin(-1)
    cf = torch.compile(f)
    x, y, z = (torch.randn(*shape) for _ in range(3))
    cf(x, y, z)
    np.testing.assert_array_equal(_np(cf(x, y, z)), _np(f(x, y, z)))
    entry, = _entries(cf)
    assert entry.forward.n_regions >= 1
