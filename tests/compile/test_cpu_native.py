"""The CPU backend's compiled regions as generated C (c_fusion.py): eager's bits for the
arithmetic (NaNs, signed zeros, ties, roundings and casts included), libmvec's
transcendentals within 4 ulp of float64 math, every layout it takes and the tiles for
the others, in-place writes, 1-3 pool threads, and the switch that turns it off."""
import subprocess
import sys

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_cpu import c_compiler, c_fusion
from tests.compile.compile_helpers import _entries, _np

pytestmark = pytest.mark.skipif(c_compiler.compiler() is None, reason="no C compiler")

N = 1 << 16          # above c_fusion.MIN_ELEMENTS: the region is generated C
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 0.5, -0.5, 2.5, 1e-30]


def _run(cf, *args):
    """The compiled call's result (the first call captures, the second replays)."""
    cf(*args)
    return cf(*args)


def _source(cf):
    src, = _entries(cf)[0].forward.sources
    return src


def _data(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 3).astype(dtype)
    a[:len(SPECIAL)] = SPECIAL
    return a


def _bits_equal(got, want):
    """Equal values, NaN where NaN, and the same sign on zeros."""
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def _arith(t):
    def f(x, y):
        m = t.maximum(x, y) - t.minimum(y, x) * 0.5
        r = t.relu(x - y) / (t.abs(y) + 1.0)
        q = t.where(x > y, t.floor(x), t.ceil(y)) + t.round(x) - t.trunc(y)
        s = t.sqrt(t.abs(x)) * -y
        c = (x != y).to(x.dtype) + (x <= 0).double().to(x.dtype)
        return m, r, q, s, c, t.relu(-x), t.maximum(y, x), t.minimum(x, y)
    return f


@pytest.mark.parametrize("threads", [1, 2, 3], indirect=True)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arithmetic_is_eagers_bit_for_bit(dtype, threads):
    xs, ys = _data(dtype), _data(dtype, seed=1)
    ys[:len(SPECIAL)] = SPECIAL[::-1]        # NaN against numbers, -0.0 against 0.0, ties
    x, y = torch.tensor(xs), torch.tensor(ys)
    f = _arith(torch)
    cf = torch.compile(f)
    for got, want in zip(_run(cf, x, y), f(x, y)):
        _bits_equal(_np(got), _np(want))
    assert "void kernel(" in _source(cf)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sin", "cos", "expm1", "log1p", "atan"])
def test_transcendentals_are_within_4_ulp_of_float64_math(op, dtype):
    rng = np.random.default_rng(2)
    xs = rng.uniform(0.01, 20, N).astype(dtype) if op in ("log", "log1p") else \
        rng.uniform(-20, 20, N).astype(dtype)
    f = (lambda x: getattr(torch, op)(x * 1.5))        # a multiply fused with the op
    cf = torch.compile(f)
    got = _np(_run(cf, torch.tensor(xs)))
    wide = xs.astype(np.float64) * np.float64(1.5)
    ref = getattr(np, op)(wide.astype(dtype).astype(np.longdouble))
    ulp = np.spacing(np.abs(ref.astype(dtype))).astype(np.longdouble)
    assert np.max(np.abs(got.astype(np.longdouble) - ref) / ulp) <= 4
    assert "void kernel(" in _source(cf)


def test_a_region_with_an_op_without_a_c_form_runs_the_tiles():
    f = lambda x, y: torch.fmod(x * y, 3.0) + y        # fmod: no vector libm function
    cf = torch.compile(f)
    x, y = torch.tensor(_data("float32")), torch.tensor(_data("float32", seed=1))
    _bits_equal(_np(_run(cf, x, y)), _np(f(x, y)))
    assert "void kernel(" not in _source(cf) and "cpu tiled numpy" in _source(cf)


@pytest.mark.parametrize("threads", [1, 2], indirect=True)
@pytest.mark.parametrize("shape_y, shape_z", [((512,), (256, 1)), ((256, 512), ()),
                                              ((1, 512), (256, 512)), ((), (1, 1))])
def test_broadcast_rows_columns_and_scalars_equal_eager(shape_y, shape_z, threads):
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((256, 512), dtype=np.float32))
    y = torch.tensor(rng.standard_normal(shape_y, dtype=np.float32))
    z = torch.tensor(rng.standard_normal(shape_z, dtype=np.float32))
    f = lambda x, y, z: torch.relu(x * y + z) - x / 3
    cf = torch.compile(f)
    _bits_equal(_np(_run(cf, x, y, z)), _np(f(x, y, z)))
    assert "void kernel(" in _source(cf)


def test_other_layouts_take_the_tiles_with_eagers_bits(monkeypatch):
    calls = []
    real = c_fusion.layout
    monkeypatch.setattr(c_fusion, "layout", lambda s, a: calls.append(r := real(s, a)) or r)
    f = lambda x, y: torch.maximum(x * 2, y) - y
    cf = torch.compile(f)
    y = torch.randn(256, 1024)[:, ::2]            # a step of 2
    z = torch.randn(256, 512)
    _bits_equal(_np(_run(cf, z, y)), _np(f(z, y)))
    assert calls and calls[-1] is None
    x = torch.randn(512, 256).t()                 # transposed: the result is laid out so too
    r = _run(cf, x, y)
    _bits_equal(_np(r), _np(f(x, y)))
    assert r.stride() == f(x, y).stride() == (1, 256)
    a, b = torch.randn(256, 512), torch.randn(256, 512)
    _bits_equal(_np(_run(cf, a, b)), _np(f(a, b)))      # the same graph, C-contiguous: generated C
    assert calls[-1] is not None


def test_in_place_chains_write_the_input_as_eager():
    def g(x, y):
        x.mul_(y).add_(1.0).relu_()
        return x
    cg = torch.compile(g)
    xs, ys = torch.randn(256, 300), torch.randn(256, 300)
    want = g(xs.clone(), ys)
    cg(xs.clone(), ys)
    got = xs.clone()
    out = cg(got, ys)
    _bits_equal(_np(got), _np(want))
    assert out is got or np.shares_memory(_np(out), _np(got))
    assert "void kernel(" in _source(cg)


def test_the_compiled_training_step_equals_eager():
    def run(compiled):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.Tanh(),
                                    torch.nn.Linear(512, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        step_model = torch.compile(model) if compiled else model
        x, t = torch.randn(128, 64), torch.randint(0, 10, (128,))
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(step_model(x), t)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().clone() for p in model.parameters()]
    (le, pe), (lc, pc) = run(False), run(True)
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


def test_turned_off_it_runs_the_tiles_and_a_bad_source_names_the_compiler(tmp_path):
    code = ("import dispatchtorch as torch;"
            "f = torch.compile(lambda x: torch.exp(x) * 2 - x);"
            "f(torch.randn(1 << 16)); f(torch.randn(1 << 16));"
            "print(list(f.cache.values())[0].forward.sources[0].splitlines()[0])")
    env = {"DISPATCHTORCH_CPU_CC": "0", "DISPATCHTORCH_CACHE_DIR": str(tmp_path)}
    import os
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, **env}, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("# cpu tiled numpy")
    assert not (tmp_path / "cpu-c").exists()
    with pytest.raises(RuntimeError, match="rejected a generated kernel"):
        c_compiler.load("this is not C;")


def test_a_built_library_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("DISPATCHTORCH_CACHE_DIR", str(tmp_path))
    src = "int answer(void) { return 42; }\n/* test_a_built_library_is_cached_on_disk */\n"
    assert c_compiler.load(src).answer() == 42
    built, = (tmp_path / "cpu-c").glob("*.so")
    assert not list((tmp_path / "cpu-c").glob("tmp*"))
    c_compiler._state.clear()                       # a new process: from the file
    stamp = built.stat().st_mtime_ns
    assert c_compiler.load(src).answer() == 42
    assert built.stat().st_mtime_ns == stamp


def test_an_unwritable_cache_falls_back_to_the_temporary_folder_then_to_no_library(
        tmp_path, monkeypatch):
    """A cache path that cannot be a folder (a file is in the way, as a read-only home
    would be): the library is built under the temporary folder; where that cannot be
    either, load answers None, as without a compiler, instead of failing the op."""
    import tempfile
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    monkeypatch.setenv("DISPATCHTORCH_CACHE_DIR", str(blocked))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    src = "int answer(void) { return 7; }\n/* test_an_unwritable_cache_falls_back */\n"
    assert c_compiler.load(src).answer() == 7
    assert list((tmp_path / "tmp").glob("dispatchtorch-*/cpu-c/*.so"))
    c_compiler._state.clear()
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    assert c_compiler.load(src.replace("7", "8")) is None
