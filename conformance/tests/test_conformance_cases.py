"""The case format and the harness's own logic: coverage, sample generators, layouts,
reproducibility, comparisons, verdicts and expected-failure files."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_conformance import coverage
from dispatchtorch_conformance.case import Arr, Case, Gen, Tol
from dispatchtorch_conformance.cases import all_cases, by_name
from dispatchtorch_conformance.compare import compare, identical, tolerance
from dispatchtorch_conformance.execute import upload
from dispatchtorch_conformance.runner import Target, run_cell
from dispatchtorch_conformance.xfails import PatternList, apply
from dispatchtorch_conformance.results import Result


def test_every_op_has_a_case():
    assert coverage.problems() == []


def test_coverage_names_a_missing_op():
    some = [c for c in all_cases() if c.op != "exp"]
    lines = coverage.problems(some)
    assert lines == ["op 'exp' has no conformance case: add one to "
                     "dispatchtorch_conformance/cases/<family>.py (or list it in "
                     "coverage.EXCLUDED with a reason)"]


def test_a_case_for_an_unknown_op_is_reported():
    bogus = Case("no_such_op", torch.exp, lambda g: [])
    assert any("no_such_op" in line for line in coverage.problems(all_cases() + [bogus]))


@pytest.mark.parametrize("name", ["add", "sum", "gather", "to_dtype", "index_put", "cat"])
def test_samples_are_reproducible(name):
    """A case id names its inputs: generating them again gives the same bits."""
    case = by_name()[name]
    for dtype in ("bool", "int8", "bfloat16", "float64"):
        first = list(case.samples(Gen(case.name, dtype)))
        again = {s.name: s for s in case.samples(Gen(case.name, dtype))}
        for s in first:
            for a, b in zip(s.arrays(), again[s.name].arrays()):
                assert a.layout == b.layout and identical(a.base, b.base), (dtype, s.name)


def test_the_range_of_values_is_respected():
    g = Gen("range", "float16")
    v = g.values((1000,), 0.05, 100).astype(np.float64)
    assert v.min() >= 0.05 and v.max() <= 100
    v = Gen("range", "uint8").values((1000,), -5, 3)
    assert v.min() >= 0 and v.max() <= 3 and v.dtype == np.uint8


@pytest.mark.parametrize("layout", Arr.LAYOUTS)
def test_layouts_give_the_values_as_views(layout):
    g = Gen("layout-test", "float32")
    a = g.arr((4, 6), layout=layout)
    leaves = []
    t = upload(a, "cpu", False, leaves)
    assert np.array_equal(t.numpy(), a.values)
    contiguous = layout in ("contig", "offset")
    assert t.is_contiguous() == contiguous
    assert (t.storage_offset() > 0) == (layout in ("step", "offset"))
    assert leaves[0].shape == a.base.shape


def test_zero_dim_inputs_stay_zero_dim():
    t = upload(Gen("zero-d", "int8").arr(()), "cpu", False, [])
    assert t.shape == () and t.dtype is torch.int8


def test_tolerance_needs_a_reason_and_only_widens():
    with pytest.raises(ValueError, match="reason"):
        Tol("", float32=(1e-3, 1e-3))
    tol = Tol("accumulation order", float32=(1e-5, 1e-9))
    assert tolerance("float32", tol) == (1e-5, 1e-5)
    assert tolerance("float16", tol) == (1e-3, 1e-5)
    assert tolerance("int32", tol) == (0.0, 0.0)


def test_compare_nan_inf_and_tolerance():
    e = np.array([1.0, np.nan, np.inf, -0.0, 100.0], np.float32)
    assert compare(e.copy(), e, 1.3e-6, 1e-5) is None
    assert compare(np.array([1.0, np.nan, np.inf, 0.0, 100.0001], np.float32), e,
                   1.3e-6, 1e-5) is None
    m = compare(np.array([1.0, 1.0, np.inf, 0.0, 100.0], np.float32), e, 1.3e-6, 1e-5)
    assert m.count == 1 and m.where == (1,) and m.max_abs == np.inf
    m = compare(np.array([1.0, np.nan, -np.inf, 0.0, 100.0], np.float32), e, 1.3e-6, 1e-5)
    assert m.count == 1 and m.where == (2,)
    m = compare(np.array([1.0, np.nan, np.inf, 0.0, 100.01], np.float32), e, 1.3e-6, 1e-5)
    assert m.count == 1 and m.max_rel == pytest.approx(1e-4, rel=0.01)


def test_compare_integers_exactly():
    assert compare(np.array([1, 2], np.int64), np.array([1, 2], np.int64), 0, 0) is None
    m = compare(np.array([1, 3], np.int8), np.array([1, 2], np.int8), 0, 0)
    assert m.count == 1 and m.max_abs == 1
    m = compare(np.array([True]), np.array([False]), 0, 0)
    assert m.count == 1


def test_compare_bfloat16():
    import ml_dtypes
    a = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    assert compare(a, a.copy(), *tolerance("bfloat16")) is None
    b = np.array([1.0, 2.5], ml_dtypes.bfloat16)
    assert compare(b, a, *tolerance("bfloat16")).where == (1,)


def _one(case, dtype="float32"):
    return run_cell(Target("cpu"), case, dtype)


def test_a_declared_error_that_does_not_happen_is_reported():
    case = Case("exp", torch.exp, lambda g: [g.sample("x", g.arr((3,))).raises(RuntimeError)])
    [r] = _one(case)
    assert r.outcome == "fail" and "did not raise the declared RuntimeError" in r.message


def test_an_error_on_both_sides_passes_as_consistent():
    case = Case("exp", torch.exp, lambda g: [g.sample("x", 3.0)])
    [r] = _one(case)
    assert r.outcome == "pass" and r.message == "both raise TypeError"


def test_alias_on_an_op_that_copies_is_a_harness_error():
    case = Case("clone", torch.clone, lambda g: [g.sample("x", g.arr((3,)))], alias=True)
    res = {r.check: r for r in _one(case)}
    assert res["alias"].outcome == "fail" and "does not alias" in res["alias"].message


def test_error_kinds_must_match(fixture_backends):
    def fn(x):
        raise (TypeError if x.device.type == "cpu" else ValueError)("nope")
    case = Case("exp", fn, lambda g: [g.sample("x", g.arr((2,)))])
    [r] = run_cell(Target("fixture"), case, "float32")
    assert r.outcome == "fail" and "raised ValueError: nope; the reference raises TypeError" in r.message


def test_a_backend_that_does_not_raise_is_caught(fixture_backends):
    def fn(x):
        if x.device.type == "cpu":
            raise IndexError("out of range")
        return x
    case = Case("exp", fn, lambda g: [g.sample("x", g.arr((2,)))])
    [r] = run_cell(Target("fixture"), case, "float32")
    assert r.outcome == "fail" and "did not raise; the reference raises IndexError" in r.message


def test_output_dtype_shape_and_device_are_checked(fixture_backends):
    def fn(x):
        if x.device.type == "cpu":
            return x * 2
        return {"dtype": (x * 2).double(), "shape": (x * 2).reshape(-1, 1)}[x.numel() == 3
                                                                            and "dtype" or "shape"]
    case = Case("mul", fn, lambda g: [g.sample("three", g.arr((3,))), g.sample("four", g.arr((4,)))])
    res = {r.sample: r for r in run_cell(Target("fixture"), case, "float32") if r.check == "forward"}
    assert "dtype float64, the reference gives float32" in res["three"].message
    assert "shape [4, 1]" in res["four"].message
    moved = Case("mul", lambda x: x.cpu() * 2, lambda g: [g.sample("x", g.arr((3,)))])
    [r] = [r for r in run_cell(Target("fixture"), moved, "float32") if r.check == "forward"]
    assert r.outcome == "fail" and "on device cpu, expected fixture:0" in r.message


def _results(*specs):
    return [Result(c, "op", d, s, "forward", o) for c, d, s, o in specs]


def test_xfails_parse_and_apply():
    xf = PatternList.parse("# header\nadd/float32   # off\nexp/*/large\nsum  # stale\nnope\n",
                           "x.txt")
    assert [e.pattern for e in xf.entries] == ["add/float32", "exp/*/large", "sum", "nope"]
    with pytest.raises(ValueError, match="one pattern per line"):
        PatternList.parse("add float32\n")
    res = _results(("add", "float32", "a", "fail"), ("add", "float32", "b", "pass"),
                   ("add", "float64", "a", "fail"), ("exp", "int8", "large", "error"),
                   ("exp", "int8", "small", "fail"), ("sum", "float32", "a", "pass"))
    unused = apply(res, xf)
    assert [r.outcome for r in res] == ["xfail", "pass", "fail", "xfail", "fail", "xpass"]
    assert res[0].expected_failure == "x.txt:2 add/float32 (off)"
    assert [e.pattern for e in unused] == ["nope"]


def test_samples_needing_unclaimed_dtypes_are_skipped(fixture_backends):
    """The fixture device does not claim int16: a cast to it is skipped, declared or not."""
    def gen(g):
        yield g.sample("declared", g.arr((3,)), "int16").needs_dtypes("int16")
        yield g.sample("undeclared", g.arr((3,)), "int16")
        yield g.sample("claimed", g.arr((3,)), "int32")
    case = Case("to_dtype", lambda x, name: x.to(getattr(torch, name)), gen)
    res = {r.sample: r for r in run_cell(Target("fixture"), case, "float32")}
    assert res["declared"].outcome == "skip" and "uses dtypes" in res["declared"].message
    assert res["undeclared"].outcome == "skip" and "result has dtype int16" in res["undeclared"].message
    assert res["claimed"].outcome == "pass"
