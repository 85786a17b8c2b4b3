"""compile(mode="max-autotune"): OpenCL times GEMM variants per call site once
(Backend.tune_kernel, dispatchtorch_opencl/gemm_tune.py). The tuned MLP equals eager
(values and gradients); the second compile reads the choices from the on-disk cache and
times nothing; a remembered variant the driver rejects, or a candidate that fails to
launch, falls back to the heuristic kernel; default mode and the CPU tune nothing."""
import copy
import json

import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import _close, _entries, _np, _opencl_ready

pytestmark = pytest.mark.skipif(not _opencl_ready(), reason="no OpenCL device")


@pytest.fixture
def tune(monkeypatch, tmp_path):
    from dispatchtorch_opencl import gemm_tune
    monkeypatch.setenv("DISPATCHTORCH_CACHE_DIR", str(tmp_path))
    gemm_tune.clear_memory()
    monkeypatch.setattr(gemm_tune, "ROUNDS", 1)          # (the choice is not what is tested)
    monkeypatch.setattr(gemm_tune, "STATS", {"timed": 0, "remembered": 0})
    yield gemm_tune
    gemm_tune.clear_memory()


def _mlp(dev, width=256):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(128, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, 10)).to(dev)


def _step(model, x):
    params = list(model.parameters())
    for p in params:
        p.grad = None
    out = model(x)
    out.square().sum().backward()
    return [out] + [p.grad for p in params]


def _x(dev, batch=64):
    xs = np.random.default_rng(0).standard_normal((batch, 128)).astype(np.float32)
    return torch.tensor(xs, device=dev)


def _sites(cm, tune):
    entry, = _entries(cm._compiled)
    progs = (entry.forward, entry.backward)
    return [st[0] for p in progs for st in p.steps if isinstance(st[0], tune._Site)]


def _tuned_equals_eager(tune, mode="max-autotune"):
    m = _mlp("opencl")
    cm = torch.compile(copy.deepcopy(m), mode=mode)
    x = _x("opencl")
    want = _step(m, x)
    _step(cm, x)                                   # captures
    for _ in range(2):                             # tunes, then runs the choices
        got = _step(cm, x)
        for a, b in zip(got, want):
            _close(a, b, "opencl")
    return cm


def _cache_file(tmp_path):
    files = list((tmp_path / "opencl-gemm").glob("*.json"))
    assert len(files) == 1
    return files[0]


def test_tuned_mlp_equals_eager_and_remembers_its_choices(tune, tmp_path):
    cm = _tuned_equals_eager(tune)
    sites = _sites(cm, tune)
    # forward: 2 linear + relu, the head; backward: 5 matmuls. Timed: the 5 of at least
    # MIN_WORK multiply-adds (not the 10-wide head's three), each layout once
    assert len(sites) == 8 and all(s.decided for s in sites)
    assert tune.STATS["timed"] == 5 and tune.STATS["remembered"] == 0
    assert "3 autotuned" in cm._compiled.explain() and "5 autotuned" in cm._compiled.explain()
    table = json.loads(_cache_file(tmp_path).read_text())
    assert len(table) == tune.STATS["timed"]

    # a fresh compile in a "new process" (choices forgotten in memory): all from disk
    tune.clear_memory()
    timed = tune.STATS["timed"]
    calls = []
    real = tune.time_variants
    tune.time_variants = lambda *a: calls.append(a) or real(*a)
    try:
        cm2 = _tuned_equals_eager(tune)
    finally:
        tune.time_variants = real
    assert calls == [] and tune.STATS["timed"] == timed
    assert tune.STATS["remembered"] == timed
    chosen = {repr((s.kind, s.layout)): s.choice for s in _sites(cm2, tune) if s.layout}
    for key, entry in table.items():
        assert chosen[key] == tune._valid(entry)


def test_a_remembered_variant_the_driver_rejects_falls_back(tune, tmp_path):
    _tuned_equals_eager(tune)
    path = _cache_file(tmp_path)
    table = json.loads(path.read_text())
    # a work-group far past the device's maximum: every launch of it fails
    bad = {k: ["packed", [1 << 20, 1, 1]] for k in table}
    bad["not a layout"] = ["bogus", None]
    path.write_text(json.dumps(bad))
    tune.clear_memory()
    _tuned_equals_eager(tune)
    after = json.loads(path.read_text())
    assert all(after[k] is None for k in table)         # forgotten: the heuristic runs


def test_a_candidate_that_fails_to_launch_is_skipped(tune, monkeypatch):
    real = tune.candidates
    monkeypatch.setattr(tune, "candidates",
                        lambda kind, hs: [("packed", (1 << 20, 1, 1)), ("direct", (3, 7, 1))]
                        + real(kind, hs))
    cm = _tuned_equals_eager(tune)
    for s in _sites(cm, tune):
        assert s.choice is None or s.choice[1] not in ((1 << 20, 1, 1), (3, 7, 1))


def test_default_mode_and_the_cpu_tune_nothing(tune):
    cm = _tuned_equals_eager(tune, mode=None)
    assert _sites(cm, tune) == [] and tune.STATS == {"timed": 0, "remembered": 0}
    m = _mlp("cpu")
    cm = torch.compile(copy.deepcopy(m), mode="max-autotune")
    x = _x("cpu")
    want = _step(m, x)
    _step(cm, x)
    for a, b in zip(_step(cm, x), want):
        np.testing.assert_array_equal(_np(a), _np(b))
    entry, = _entries(cm._compiled)
    assert entry.forward.n_tuned == entry.backward.n_tuned == 0


@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
def test_every_variant_equals_the_heuristic_kernel(tune, layout):
    from dispatchtorch_opencl.kernels.matmul import VARIANTS, matmul
    rng = np.random.default_rng(1)
    M, K, N = 70, 96, 64
    a = rng.standard_normal((K, M) if layout == "tn" else (M, K)).astype(np.float32)
    b = rng.standard_normal((N, K) if layout == "nt" else (K, N)).astype(np.float32)
    ta, tb = torch.tensor(a, device="opencl"), torch.tensor(b, device="opencl")
    ta = ta.t() if layout == "tn" else ta
    tb = tb.t() if layout == "nt" else tb
    want = _np(ta @ tb)
    ran = 0
    for v in VARIANTS:
        for local in (None, (2, 1, 1)):
            out = torch.empty((M, N), device="opencl")
            try:
                matmul(out._h, ta._h, tb._h, variant=v, local=local)
            except ValueError:
                assert v == "packed_brows" and layout == "nt"   # b's rows not contiguous
                continue
            np.testing.assert_allclose(_np(out), want, rtol=1e-5, atol=1e-5)
            ran += 1
    assert ran == (4 if layout == "nt" else 6)


def test_b_in_place_needs_whole_panels(tune):
    from dispatchtorch_opencl.kernels.matmul import matmul
    a = torch.randn(8, 16, device="opencl")
    b = torch.randn(16, 20, device="opencl")         # 20 columns: a partial 16-lane panel
    with pytest.raises(ValueError, match="in place"):
        matmul(torch.empty((8, 20), device="opencl")._h, a._h, b._h, variant="packed_brows")


def test_mode_and_option_spellings():
    m = torch.nn.Linear(4, 4)
    assert torch.compile(m, mode="max-autotune-no-cudagraphs")._compiled.options["max_autotune"]
    assert torch.compile(m, options={"max_autotune": True})._compiled.options["max_autotune"]
    assert not torch.compile(m, backend="eager", mode="max-autotune")._compiled.options["max_autotune"]
    assert "max_autotune" not in torch.compile(m)._compiled.options


def test_a_site_called_with_another_layout_runs_the_plain_kernel(tune, monkeypatch):
    from dispatchtorch_opencl.kernels.matmul import matmul
    monkeypatch.setattr(tune, "time_variants", lambda *a: ("packed", None))   # a fixed choice
    site = tune.tune_kernel("matmul", matmul)
    a, b = torch.randn(64, 128, device="opencl"), torch.randn(128, 256, device="opencl")
    out = torch.empty((64, 256), device="opencl")
    site(out._h, a._h, b._h)
    assert site.choice == ("packed", None)
    np.testing.assert_allclose(_np(out), _np(a @ b), rtol=1e-5, atol=1e-5)
    calls = []
    real = site.kernel
    site.kernel = lambda *hs, **kw: calls.append(kw) or real(*hs, **kw)
    at = torch.randn(128, 64, device="opencl").t()                 # same shape, a transposed
    site(out._h, at._h, b._h)
    np.testing.assert_allclose(_np(out), _np(at @ b), rtol=1e-5, atol=1e-5)
    site(out._h, a._h, b._h)
    assert calls == [{}, {"variant": "packed", "local": None}]


def test_remembered_entries_are_checked():
    from dispatchtorch_opencl import gemm_tune
    assert gemm_tune._valid(["packed", [8, 1, 1]]) == ("packed", (8, 1, 1))
    assert gemm_tune._valid(["direct", None]) == ("direct", None)
    for bad in (None, "packed", ["bogus", None], ["packed", [0, 1]], ["packed", "8"],
                ["packed", [8, 1, 1, 1]], ["packed", None, 1]):
        assert gemm_tune._valid(bad) is None


@pytest.mark.parametrize("second", [0.5, 0.99])
def test_a_winner_must_win_twice(tune, monkeypatch, second):
    """The decision on a fake clock: "packed" takes half the heuristic's time in the
    race of all candidates, then `second` of it against the heuristic alone."""
    import types
    clock, calls = [0.0], []
    monkeypatch.setattr(tune, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    cands = [("packed", None), ("direct", None)]
    first_race_end = len(cands) + len(cands) + 1      # builds, then one round (ROUNDS=1)

    def kernel(*hs, variant=None, local=None):
        calls.append(variant)
        cost = {None: 1.0, "direct": 1.2, "packed": 0.5}[variant]
        if variant == "packed" and len(calls) > first_race_end:
            cost = second
        clock[0] += cost

    dev = types.SimpleNamespace(synchronize=lambda: None)
    got = tune.time_variants(kernel, (types.SimpleNamespace(dev=dev),), cands)
    assert got == (("packed", None) if second < tune.MARGIN else None)
