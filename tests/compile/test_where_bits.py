"""The CPU fused kernel's `where` as bit operations (fusion._where_kernel): the ReLU
backward's where(x <= 0, 0, g), a where with +0 as its other branch, and the general
select give numpy's np.where bit for bit (NaN payloads, -0.0, infinities), in one
tile and over many; the tile program names the bit form."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_cpu import fusion
from tests.compile.compile_helpers import _entries, _np

SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.25, 1e-40, -1e-40]


def _data(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-2**30, 2**30, n).astype(dtype)
    x = rng.standard_normal(n).astype(dtype)
    x[:len(SPECIAL)] = np.array(SPECIAL, dtype)
    return x


CASES = {
    "zero_a": (lambda t, x, g: t.where(x <= 0, 0, g * 2),
               lambda x, g: np.where(x <= 0, x.dtype.type(0), g * 2), "b & (cond - 1)"),
    "zero_b": (lambda t, x, g: t.where(x > 1, g * 2, 0),
               lambda x, g: np.where(x > 1, g * 2, x.dtype.type(0)), "a & -cond"),
    "select": (lambda t, x, g: t.where(x < g, x * 3, g - x),
               lambda x, g: np.where(x < g, x * 3, g - x), "b ^ ((a ^ b) & -cond)"),
    "minus_zero": (lambda t, x, g: t.where(x <= 0, -0.0, g * 2),
                   lambda x, g: np.where(x <= 0, x.dtype.type(-0.0), g * 2),
                   "b ^ ((a ^ b) & -cond)"),
}


@pytest.mark.parametrize("case,dtype", [(c, d) for c in CASES for d in ("float32", "float64", "int64")
                                        if not (c == "minus_zero" and d == "int64")])
@pytest.mark.parametrize("n", [1000, 9001])          # one tile; three (TILE 4096)
def test_where_as_bits_equals_numpys_where(case, dtype, n, monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)
    ours, theirs, text = CASES[case]
    x, g = _data(dtype, n, 0), _data(dtype, n, 1)
    g[1:len(SPECIAL) + 1] = x[:len(SPECIAL)] if not dtype.startswith("int") else g[1:11]
    cf = torch.compile(lambda a, b: ours(torch, a, b))
    got = _np(cf(torch.tensor(x), torch.tensor(g)))
    want = theirs(x, g)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
    src, = _entries(cf)[0].forward.sources
    assert f"# bits: {text}" in src


def test_a_region_with_minus_zero_is_not_the_cached_plus_zero_kernel():
    # region keys compare constants as numbers: -0.0 == 0.0 fetched the +0.0 kernel
    x = torch.tensor([-1.0, 2.0])
    for zero in (0.0, -0.0):
        cf = torch.compile(lambda a, z=zero: torch.where(a <= 0, z, a * 2))
        got = _np(cf(x))
        assert np.signbit(got[0]) == np.signbit(zero) and got[1] == 4.0


def test_a_where_on_half_floats_keeps_the_where_kernel():
    x = torch.randn(64).to(torch.float16)
    cf = torch.compile(lambda a: torch.where(a <= 0, 0, a * 2))
    np.testing.assert_array_equal(_np(cf(x)), np.where(_np(x) <= 0, np.float16(0), _np(x) * 2))
    src, = _entries(cf)[0].forward.sources
    assert "bits:" not in src


def test_the_mlp_backward_uses_the_bit_form_and_equals_eager():
    torch.manual_seed(0)
    nn = torch.nn
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    cm = torch.compile(m)
    x = torch.randn(5, 8)
    grads = []
    for model in (m, cm, cm):
        m.zero_grad()
        model(x).square().sum().backward()
        grads.append([_np(p.grad).copy() for p in m.parameters()])
    for a, b in zip(grads[0], grads[2]):
        np.testing.assert_array_equal(a, b)
    entry, = _entries(cm._compiled)
    assert any("where(t0, 0.0, in1)" in s and "# bits: b & (cond - 1)" in s
               for s in entry.backward.sources)


@pytest.mark.parametrize("case,dtype", [(c, d) for c in CASES for d in ("float32", "float64", "int64")
                                        if not (c == "minus_zero" and d == "int64")])
@pytest.mark.parametrize("n", [1000, 300_001])       # one call; the pool's chunks
def test_eager_where_as_bits_equals_numpys_where(case, dtype, n):
    # the eager CPU kernel (kernels._where_plain through where_bits.where) shares the bit
    # forms; broadcast operands too (a row of conditions against a column of values)
    fn, ref, _ = CASES[case]
    x, g = _data(dtype, n, 1), _data(dtype, n, 2)
    got = fn(torch, torch.from_numpy(x), torch.from_numpy(g)).numpy()
    assert got.tobytes() == ref(x, g).tobytes()
    c, a, b = x[:7] > 0, x[:3].reshape(3, 1), g[:7]
    assert torch.where(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b)).numpy() \
        .tobytes() == np.where(c, a, b).tobytes()


@pytest.mark.parametrize("shapes", [((), (), ()), ((3,), (), ()), ((), (3,), ()), ((), (), (3,))])
def test_eager_where_on_zero_dim_operands(shapes):
    # 0-d operands make numpy return scalars from the bit operations
    c = np.array([True, False, True])[:1 if shapes[0] == () else 3].reshape(shapes[0])
    a, b = np.full(shapes[1], 1.5, np.float32), np.full(shapes[2], np.nan, np.float32)
    got = torch.where(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert got.tobytes() == np.where(c, a, b).astype(np.float32).tobytes()
