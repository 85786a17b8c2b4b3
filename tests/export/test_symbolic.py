"""Sizes that follow dynamic axes: fitting them from traces, exact arithmetic on them."""
import pytest

from dispatchtorch.export._symbolic import SymInt, fit, sample_points, sym_div


def _fit(f, base):
    points = sample_points(base)
    return fit([f(**p) for p in points], points, "size")


def test_fit_recovers_multilinear_sizes():
    r = _fit(lambda B, T: 3 * B * T + B + 7, {"B": 4, "T": 8})
    assert r.terms == {("B", "T"): 3, ("B",): 1, (): 7}
    assert r.hint == 3 * 4 * 8 + 4 + 7
    assert r.evaluate({"B": 10, "T": 2}) == 3 * 10 * 2 + 10 + 7
    assert _fit(lambda B: 5, {"B": 3}) == 5          # unchanged: a plain int


def test_fit_rejects_what_it_cannot_express():
    with pytest.raises(ValueError, match="size"):
        _fit(lambda B: B * B, {"B": 4})
    with pytest.raises(ValueError, match="size"):
        _fit(lambda B: B // 2, {"B": 4})


def test_exact_arithmetic():
    B = SymInt({("B",): 1}, 4)
    T = SymInt({("T",): 1}, 8)
    m = B * 64 * T
    assert (m // 64).terms == {("B", "T"): 1} and (m // 64).hint == 32
    assert (m // (T * 4)).terms == {("B",): 16}
    assert B + 1 - 1 == B and B - B == 0
    assert sym_div(12, 4) == 3
    with pytest.raises(ValueError):
        sym_div(B + 1, B)
    with pytest.raises(ValueError):
        sym_div(B * 3, 2)
    assert SymInt.from_data(m.to_data()) == m and SymInt.from_data(m.to_data()).hint == m.hint
