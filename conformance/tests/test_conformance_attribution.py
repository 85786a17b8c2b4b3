"""Deliberately broken copies of the CPU backend (fixture_backends/dtc_fixture_broken.py),
one bug each: the suite must catch every one, in the prim that has the bug, and say
so on the composites and gradients that ran it; a faithful copy must pass untouched."""
import numpy as np
import pytest

from dispatchtorch.dispatch import OPS, get_backend, record_kernels, resolve
from dispatchtorch_conformance.attribution import attribute, describe_blame
from dispatchtorch_conformance.cases import by_name
from dispatchtorch_conformance.runner import Target, run_cell, select
from dispatchtorch_conformance.cases import all_cases
from dispatchtorch.backend.prims import PRIMS

# backend -> (dtype, the prim's own cases, composite cases that must blame the prim,
#             samples that must fail in the first own case, samples that must pass there)
PLAN = {
    "b_expm1": ("float32", ["expm1"], [], ["logscale", "extremes"], ["0d", "one"]),
    "b_ftz": ("float32", ["mul"], [], ["extremes", "specials"], ["same", "bcast"]),
    "b_zerosign": ("float32", ["neg"], [], ["extremes"], ["prime", "T"]),
    "b_halfsum": ("float16", ["sum"], ["add"], ["dim1"], ["0d", "one"]),
    "b_int32sum": ("int64", ["sum"], [], ["wide"], ["all", "dim1", "prime"]),
    # (T3 and perm4, dense permutations, now reach the kernel contiguous: the frontend runs
    # elementwise ops on permuted views in the layout PyTorch gives the result)
    "b_layout": ("float32", ["abs"], [], ["step5"], ["T", "step", "step1", "T3", "perm4"]),
    "b_tile": ("float32", ["matmul"], ["linear"], ["tiles-17x33x65", "tiles-4x127x129"],
               ["tiles-129x17x3", "prime", "batched"]),
    "b_scatter": ("float32", ["index_add_"], ["cummax"], ["dim0"], []),
}
PRIM_OF = {"b_expm1": "expm1", "b_ftz": "mul", "b_zerosign": "neg", "b_halfsum": "sum",
           "b_int32sum": "sum", "b_layout": "abs", "b_tile": "matmul", "b_scatter": "scatter_"}


def _run(backend, dtype, names):
    t = Target(backend)
    results = []
    for name in names:
        results += run_cell(t, by_name()[name], dtype)
    attribute(results)
    return results


@pytest.mark.parametrize("backend", sorted(PLAN))
def test_a_broken_prim_is_caught_and_attributed(fixture_backends, backend):
    dtype, own, composites, must_fail, must_pass = PLAN[backend]
    prim = PRIM_OF[backend]
    results = _run(backend, dtype, own + composites)
    forward = {r.sample: r for r in results if r.case == own[0] and r.check == "forward"}
    for s in must_fail:
        assert forward[s].failed, (s, forward[s].message)
        assert forward[s].op == prim
    for s in must_pass:
        assert forward[s].outcome == "pass", (s, forward[s].message)
    for name in composites:
        bad = [r for r in results if r.case == name and r.failed]
        assert bad, f"{name} should fail on {backend}"
        assert all(f"{prim}/{dtype}" in r.blame for r in bad), [(r.id, r.blame) for r in bad]
        assert describe_blame([f"{prim}/{dtype}"]) == f"fails because `{prim}` ({dtype}) fails"


def test_the_issue_examples_read_as_the_prim(fixture_backends):
    """A half-precision sum shows as add's gradient; a scatter_ bug as cummax's."""
    r = [x for x in _run("b_halfsum", "float16", ["sum", "add"])
         if x.id == "add/float16/offset/grad"][0]
    assert r.failed and r.blame == ["sum/float16"]
    r = [x for x in _run("b_scatter", "float32", ["index_add_", "cummax"])
         if x.id == "cummax/float32/dim1/grad"][0]
    assert r.failed and r.blame == ["scatter_/float32"]


def test_the_bugs_are_invisible_to_a_plain_tolerance(fixture_backends):
    """What the ulp budgets add: these defects are inside assert_close's atol."""
    r = {x.sample: x for x in _run("b_ftz", "float32", ["mul"]) if x.check == "forward"}
    assert r["extremes"].max_abs < 1e-5 and r["extremes"].max_ulp > 1e6
    r = {x.sample: x for x in _run("b_zerosign", "float32", ["neg"]) if x.check == "forward"}
    assert r["extremes"].max_abs == 0 and "sign of zero" in r["extremes"].message


def test_a_faithful_copy_passes_with_no_false_alarm(fixture_backends):
    names = sorted({n for _, own, comp, _, _ in PLAN.values() for n in own + comp})
    for dtype in ("float32", "float16", "int64"):
        results = _run("faithful", dtype, [n for n in names if n not in
                                           (("linear", "cummax") if dtype == "int64" else ())])
        bad = [(r.id, r.message) for r in results if r.outcome not in ("pass", "skip")]
        assert not bad, bad[:5]
        assert any(r.prims for r in results)


def test_prims_are_recorded_per_check_with_their_dtype(fixture_backends):
    results = _run("faithful", "float16", ["add"])
    grad = [r for r in results if r.id == "add/float16/bcast/grad"][0]
    assert "sum/float16" in grad.prims
    fwd = [r for r in results if r.id == "add/float16/same/forward"][0]
    assert fwd.prims == ["add/float16"]


def test_without_a_recorder_kernels_are_not_wrapped():
    """The hook costs nothing when off: resolution caches the backend's own kernel."""
    rt = get_backend("cpu")
    record_kernels(lambda *a: None)
    assert resolve(OPS["add"], rt) is not rt.kernels["add"]
    record_kernels(None)
    assert OPS["add"].kernels.get("cpu") is None
    assert resolve(OPS["add"], rt) is rt.kernels["add"]


def test_prims_run_first_and_the_prims_filter():
    cases = all_cases()
    ordered = select(cases)
    first_composite = next(i for i, c in enumerate(ordered) if c.op not in PRIMS)
    assert all(c.op not in PRIMS for c in ordered[first_composite:])
    only = select(cases, prims=["*"])
    assert only and all(c.op in PRIMS for c in only)
    assert {c.op for c in only} == set(PRIMS)          # every prim has cases of its own
    assert {c.name for c in select(cases, prims=["sum"])} == {"sum", "mean"}


def test_exact_names_and_patterns():
    cases = all_cases()
    assert [c.name for c in select(cases, ["sum"])] == ["sum"]
    assert {c.name for c in select(cases, ["matmul"])} == {"matmul"}
    assert {"bitwise_and", "bitwise_or"} <= {c.name for c in select(cases, ["bitwise_*"])}
    assert {c.name for c in select(cases, ["scatter_"])} >= {"index_add_"}   # an op's cases
