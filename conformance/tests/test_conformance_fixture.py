"""The suite against a deliberately wrong backend: every defect must get the right
verdict, and the right things must still pass."""
import numpy as np
import pytest

from dispatchtorch_conformance import contract
from dispatchtorch_conformance.cases import by_name
from dispatchtorch_conformance.report import cells
from dispatchtorch_conformance.runner import Target, run_cell


def _cell(target, name, dtype):
    return run_cell(target, by_name()[name], dtype)


def _by_sample(results, check="forward"):
    return {r.sample: r for r in results if r.check == check}


@pytest.fixture
def target(fixture_backends):
    return Target("fixture")


def test_add_off_by_1000_ulp_fails_in_single_and_half_precision(target):
    for dtype, (lo, hi) in {"float32": (5.9e-5, 1.2e-4), "float16": (0.25, 1.0)}.items():
        res = _by_sample(_cell(target, "add", dtype))
        same = res["same"]
        assert same.outcome == "fail", same
        # 1000 ulp relative to the value: 1000 * 2**-23 in float32, about 1 in float16
        assert lo <= same.max_rel <= hi, (dtype, same.max_rel)
        assert same.rtol == pytest.approx({"float32": 1.3e-6, "float16": 1e-3}[dtype])
        assert "elements differ" in same.message


def test_add_off_by_1000_ulp_fails_by_ulp_in_float64_and_exactly_for_ints(target):
    """1000 ulp of float64 is below any rtol, but add is correctly rounded: budget 0."""
    f64 = _cell(target, "add", "float64")
    same = _by_sample(f64)["same"]
    assert same.outcome == "fail" and same.max_ulp == 1000 and same.ulp_budget == 0
    assert "(budget 0 ulp)" in same.message and same.max_rel < 1e-7
    # the gradient of a broadcast add sums with keepdim: the broken sum shows there too
    grad = _by_sample(f64, "grad")
    assert grad["same"].outcome == "pass"
    assert grad["bcast"].outcome == "error" and "sum failed on backend" in grad["bcast"].message
    i32 = _by_sample(_cell(target, "add", "int32"))
    assert i32["same"].outcome == "fail" and i32["same"].max_abs == 1000
    # bool add is a logical or, which the fixture leaves alone; bool + 2 is an int64 add
    b = _by_sample(_cell(target, "add", "bool"))
    assert b["same"].outcome == "pass" and b["scalar2"].outcome == "fail"


def test_sum_ignoring_keepdim_fails_the_keepdim_samples_only(target):
    res = _by_sample(_cell(target, "sum", "float32"))
    for name in ("dim-1-keep", "dims0-1-keep"):
        assert res[name].outcome in ("fail", "error"), res[name]
        assert "sum failed on backend 'fixture'" in res[name].message
    for name in ("all", "dim1", "dims02", "T", "step", "large-all", "large-dim1"):
        assert res[name].outcome == "pass", res[name]


def test_exp_raising_is_an_error_naming_op_and_backend(target):
    res = _cell(target, "exp", "float32")
    forward = [r for r in res if r.check == "forward"]
    assert forward and all(r.outcome == "error" for r in forward)
    assert all("exp failed on backend 'fixture'" in r.message and "exp kernel exploded" in r.message
               for r in forward)
    # an int input is promoted to float and reaches the same kernel
    assert all(r.outcome == "error" for r in _cell(target, "exp", "int32") if r.check == "forward")


def test_relu_writing_into_its_input_is_caught(target):
    res = _by_sample(_cell(target, "relu", "float32"))
    bad = [r for r in res.values() if r.outcome == "fail"]
    assert res["prime"].outcome == "fail"
    assert "the op modified its input" in res["prime"].message
    # its output values are right: only the input check catches it
    assert all("storage after the call differs" in r.message for r in bad)
    assert not any(r.decomposed for r in res.values())     # its own kernel ran


def test_fallback_and_decomposition_are_reported(target):
    cos = _cell(target, "cos", "float32")
    assert all(r.outcome == "pass" for r in cos)
    assert all(r.fallback == ["cos"] for r in cos if r.sample != "empty")
    sig = _cell(target, "sigmoid", "float32")
    assert all(r.decomposed for r in sig)
    table = cells(cos + sig)
    assert table["cos"]["float32"].text() == "ok+f"
    assert table["sigmoid"]["float32"].text() == "err+d"     # its decomposition uses exp


def test_unclaimed_dtype_is_skipped_with_reason(target):
    [r] = _cell(target, "add", "int16")
    assert r.outcome == "skip" and "does not claim dtype int16" in r.message
    assert cells([r])["add"]["int16"].status == "n/c"


def test_contract_of_the_fixture_passes(target):
    results = contract.run(target)
    assert results and all(r.outcome in ("pass", "skip") for r in results), \
        [(r.id, r.message) for r in results if r.outcome not in ("pass", "skip")]
    assert not any(r.dtype == "int16" for r in results if r.outcome == "pass")


def test_kernel_error_contract_fails_when_the_error_hides_op_and_backend(target, monkeypatch):
    """The contract check itself must catch a core that swallows the op's name."""
    from dispatchtorch import _run
    from dispatchtorch.ops import _elementwise
    import dispatchtorch.dispatch as dispatch

    def vague(op_name, rt_name, dtypes, exc):
        return RuntimeError("something went wrong")
    monkeypatch.setattr(_elementwise, "kernel_error", vague)
    monkeypatch.setattr(_run, "kernel_error", vague)
    monkeypatch.setattr(dispatch, "kernel_error", vague)
    r = contract.run_one(target, "kernel-error")
    assert r.outcome == "fail" and "does not name op 'add'" in r.message


def test_reference_against_itself_is_exact():
    t = Target("cpu")
    res = run_cell(t, by_name()["add"], "float32")
    assert all(r.outcome == "pass" for r in res)
    assert all(np.isnan(r.max_abs) if r.max_abs is not None else True for r in res)
