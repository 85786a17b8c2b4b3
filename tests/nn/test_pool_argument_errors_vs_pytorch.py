"""max_pool1d / max_pool2d / avg_pool2d / max_pool3d refusing bad geometry as PyTorch's
ATen does: the same RuntimeError text, in ATen's order of checks (a zero stride, then
the padding's bounds per dim, then kernel, stride and dilation, then the output size)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

GEOMETRY = [dict(kernel_size=2, stride=0), dict(kernel_size=2, stride=-1),
            dict(kernel_size=0), dict(kernel_size=-1), dict(kernel_size=2, dilation=0),
            dict(kernel_size=2, padding=-1), dict(kernel_size=2, padding=2),
            dict(kernel_size=9)]
POOLS = {
    "max_pool1d": (lambda L: L.ones(2, 3, 4), lambda L: L.nn.functional.max_pool1d),
    "max_pool2d": (lambda L: L.ones(2, 3, 4, 4), lambda L: L.nn.functional.max_pool2d),
    "avg_pool2d": (lambda L: L.ones(2, 3, 4, 4), lambda L: L.nn.functional.avg_pool2d),
    "max_pool3d": (lambda L: L.ones(2, 3, 2, 4, 4), lambda L: L.nn.functional.max_pool3d),
    "torch.max_pool2d": (lambda L: L.ones(2, 3, 4, 4), lambda L: L.max_pool2d),
}


def _raised(lib, pool, kw):
    make, fn = POOLS[pool]
    if pool == "avg_pool2d" and "dilation" in kw:
        pytest.skip("avg_pool2d takes no dilation")
    with pytest.raises(RuntimeError) as info:
        fn(lib)(make(lib), **kw)
    return str(info.value)


@pytest.mark.parametrize("kw", GEOMETRY, ids=[str(g) for g in GEOMETRY])
@pytest.mark.parametrize("pool", list(POOLS))
def test_pool_geometry_refused_as_pytorch(pool, kw):
    assert _raised(dt, pool, kw) == _raised(torch, pool, kw)
