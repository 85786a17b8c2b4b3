"""Sizes that follow dynamic axes: fitting them from traces, exact arithmetic on them."""
import pytest

from dispatchtorch.export._symbolic import SymInt, fit, sample_points, sym_div


def _fit(f, ranges):
    points = sample_points(ranges)
    return fit([f(**p) for p in points], points, "size")


def test_sample_points_avoid_static_sizes_and_respect_ranges():
    points = sample_points({"B": (0, None), "T": (0, 60)}, avoid={5, 7, 16}, examples={"B": 9})
    assert len(points) == 10
    sizes = [{p[n] for p in points} for n in ("B", "T")]
    assert all(len(s) == 4 for s in sizes) and not sizes[0] & sizes[1]
    assert not (sizes[0] | sizes[1]) & {5, 7, 16} and max(sizes[1]) <= 60
    with pytest.raises(ValueError, match="too small a range"):
        sample_points({"B": (2, 4)})
    # the example size and the primes below it first (the model accepts those)
    assert sorted({p["T"] for p in sample_points({"T": (0, None)}, examples={"T": 12})}) == \
        [5, 7, 11, 12]


def test_fit_recovers_multilinear_sizes():
    r = _fit(lambda B, T: 3 * B * T + B + 7, {"B": (0, None), "T": (0, None)})
    assert r.terms == {("B", "T"): 3, ("B",): 1, (): 7}
    p0 = sample_points({"B": (0, None), "T": (0, None)})[0]
    assert r.hint == 3 * p0["B"] * p0["T"] + p0["B"] + 7
    assert r.evaluate({"B": 10, "T": 2}) == 3 * 10 * 2 + 10 + 7
    assert _fit(lambda B: 5, {"B": (0, None)}) == 5          # unchanged: a plain int


def test_fit_rejects_what_it_cannot_express():
    assert _fit(lambda B, T: 4 * B * T * T, {"B": (0, None), "T": (0, None)}).terms == \
        {("B", "T", "T"): 4}
    with pytest.raises(ValueError, match="size"):
        _fit(lambda B: B * B * B, {"B": (0, None)})
    with pytest.raises(ValueError, match="size"):
        _fit(lambda B: B // 2, {"B": (0, None)})


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
