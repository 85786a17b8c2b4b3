"""The CPU fused kernel over many tiles (regions larger than fusion.TILE, the last tile
partial, on one to three pool threads) gives eager's numbers bit for bit, also where an
output's tile holds its chain; the pool's thread count follows OMP_NUM_THREADS."""
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


# -- an output's chain computed in the output's tile (fusion._borrowers) ----------------

# the pool at 1, 2 and 3 threads (conftest's fixture, three counts here)
ONE_TO_THREE = pytest.mark.parametrize("threads", [1, 2, 3], indirect=True)


def _chain(t):
    return lambda x, y, z: t.exp(x * y + z) * x - y


@ONE_TO_THREE
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_exp_chain_in_its_outputs_tile_equals_numpys_passes(dtype, threads, monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)
    rng = np.random.default_rng(0)
    # 3 x 7003: tiles of 4096 rows... cut along the last axis, the last tile partial
    x, y, z = (rng.standard_normal((3, 7003)).astype(dtype) for _ in range(3))
    cf = torch.compile(_chain(torch))
    got = _np(cf(*(torch.tensor(a) for a in (x, y, z))))
    np.testing.assert_array_equal(got, np.exp(x * y + z) * x - y)   # numpy's own passes
    src, = _entries(cf)[0].forward.sources
    assert "exp(t1)  (in out0's tile)" in src and "mul(t2, in0)  (in out0's tile)" in src


@ONE_TO_THREE
def test_strided_and_broadcast_inputs_and_half_equal_eager(threads, monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)
    f = _chain(torch)
    cf = torch.compile(f)
    x = torch.randn(5003, 3).t()                  # transposed: strides (1, 3)
    y = torch.randn(3, 10006)[:, ::2]             # every other column
    z = torch.randn(5003)                         # broadcast over the rows
    np.testing.assert_array_equal(_np(cf(x, y, z)), _np(f(x, y, z)))
    for dt in (torch.float16, torch.bfloat16):
        h = [torch.randn(2, 6007).to(dt) for _ in range(3)]
        np.testing.assert_array_equal(_np(cf(*h).float()), _np(f(*h).float()))


def test_an_output_written_into_an_input_is_not_used_as_scratch(monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)

    def g(x, y):
        x.copy_(torch.exp(x * y) * x - y)        # the output is x, read again after exp
        return x
    cg = torch.compile(g)
    x, y = torch.randn(3, 7007), torch.randn(3, 7007)
    want = g(x.clone(), y)
    cg(x.clone(), y)
    np.testing.assert_array_equal(_np(cg(x.clone(), y)), _np(want))
    src, = _entries(cg)[0].forward.sources
    assert "(in out0's tile)" in src
    # the per-call overlap test is what keeps it right: without it, exp overwrites x
    monkeypatch.setattr(fusion, "_may_share", lambda a, b: False)
    assert not np.array_equal(_np(cg(x.clone(), y)), _np(want))


@pytest.mark.parametrize("env, want", [("1", 1), ("3", 3), ("4,2", 4), ("0", None), ("", None),
                                       ("x", None)])
def test_the_pool_reads_omp_num_threads_as_pytorch(env, want, monkeypatch):
    import os
    from dispatchtorch_cpu import parallel as P
    monkeypatch.setenv("OMP_NUM_THREADS", env)
    assert P.default_threads() == (want or os.cpu_count())


@ONE_TO_THREE
def test_a_chain_written_into_a_strided_view_equals_eager(threads, monkeypatch):
    monkeypatch.setattr(fusion, "TILE", 4096)

    def g(buf, x, y, z):
        buf.t().copy_(torch.exp(x * y + z) * x - y)    # the output: a transposed view
        return buf
    cg = torch.compile(g)
    x, y, z = (torch.randn(3, 5009) for _ in range(3))
    want = g(torch.zeros(5009, 3), x, y, z)
    cg(torch.zeros(5009, 3), x, y, z)
    np.testing.assert_array_equal(_np(cg(torch.zeros(5009, 3), x, y, z)), _np(want))
    np.testing.assert_array_equal(_np(want).T, np.exp(_np(x) * _np(y) + _np(z)) * _np(x) - _np(y))
