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


def test_ulp_distance_counts_representable_values():
    from dispatchtorch_conformance.compare import ulp_distance
    one = np.float32(1.0)
    up = np.nextafter(one, np.float32(2))
    assert ulp_distance(np.array([up]), np.array([one])).tolist() == [1.0]
    sub = np.array([np.finfo(np.float32).smallest_subnormal], np.float32)
    assert ulp_distance(sub, -sub).tolist() == [2.0]                 # across zero
    assert ulp_distance(np.array([0.0], np.float32), np.array([-0.0], np.float32)).tolist() == [0.0]
    half = np.array([np.finfo(np.float32).tiny / 2], np.float32)    # a subnormal flushed
    assert ulp_distance(np.zeros(1, np.float32), half).tolist() == [2.0 ** 22]
    big = np.array([np.finfo(np.float64).max], np.float64)
    assert ulp_distance(big, -big)[0] > 1e19                          # no int64 overflow


def test_compare_by_ulp_catches_what_atol_hides():
    tiny = np.array([1e-30, 2.0], np.float32)
    wrong = np.array([0.0, 2.0], np.float32)
    assert compare(wrong, tiny, *tolerance("float32")) is None        # inside atol
    m = compare(wrong, tiny, *tolerance("float32"), ulps=7)
    assert m.count == 1 and m.where == (0,) and m.max_ulp > 1e8
    assert "budget 7 ulp" in m.describe(0, 0)
    z = compare(np.array([0.0], np.float32), np.array([-0.0], np.float32), 0, 0, ulps=0)
    assert z is not None and z.why == "sign of zero" and z.max_abs == 0
    assert compare(np.array([np.nan, np.inf], np.float32), np.array([np.nan, np.inf], np.float32),
                   0, 0, ulps=0) is None
    import ml_dtypes
    b = np.array([1.0], ml_dtypes.bfloat16)
    b2 = np.array([1.0078125], ml_dtypes.bfloat16)                    # the next bfloat16
    assert compare(b2, b, 0, 0, ulps=1) is None and compare(b2, b, 0, 0, ulps=0).max_ulp == 1


def test_integer_mismatches_report_absolute_differences_only():
    m = compare(np.array([2 ** 62], np.int64), np.array([-(2 ** 62)], np.int64), 0, 0)
    assert m.max_rel is None and m.max_abs == float(2 ** 63)
    text = m.describe(0, 0)
    assert "max abs difference 9223372036854775808" in text and "rel" not in text


def test_specials_land_at_random_positions_several_per_row():
    g = Gen("specials-test", "float32")
    arr = g.with_specials(g.arr((5, 37)))
    v = arr.values
    special = ~np.isfinite(v) | (v == 0) | (np.abs(v) < np.finfo(np.float32).tiny)
    assert special[0, 0] and special[-1, -1]
    assert (special.sum(axis=1) >= 2).sum() >= 3
    assert np.isnan(v).any() and np.isinf(v).any()


def test_logscale_spans_binades_inside_the_range():
    g = Gen("logscale-test", "float64")
    v = g.logscale((64, 16), -1.0, 1.0).values
    assert v.min() >= -1 and v.max() <= 1 and (v < 0).any() and (v > 0).any()
    e = np.log2(np.abs(v))
    assert e.min() < -25 and e.max() > -2
    pos = g.logscale((200,), 0.1, 3.0).values
    assert pos.min() >= 0.1 and pos.max() <= 3.0


def test_every_standard_family_has_every_rank_and_the_sharp_kinds():
    names = {s.name for s in by_name()["exp"].samples(Gen("exp", "float32"))}
    assert {"step1", "T3", "perm4", "step5", "logscale", "specials"} <= names
    names = {s.name for s in by_name()["add"].samples(Gen("add", "int64"))}
    assert {"step1", "perm4-bcast", "step5-T3", "wide"} <= names
    names = {s.name for s in by_name()["sum"].samples(Gen("sum", "int32"))}
    assert {"empty-dim1-3d", "perm4-dim2", "step5-dims", "wide"} <= names
    ranks = {len(a.shape) for s in by_name()["exp"].samples(Gen("exp", "float32"))
             for a in s.arrays() if a.layout != "contig"}
    assert {1, 2, 3, 4, 5} <= ranks
    tiles = [s for s in by_name()["matmul"].samples(Gen("matmul", "float32"))
             if s.name.startswith("tiles")]
    dims = {d for s in tiles for a in s.arrays() for d in a.shape}
    assert {1, 3, 4, 5, 15, 16, 17, 31, 33, 63, 65, 127, 129} <= dims
