"""torch.testing.assert_close / assert_allclose against PyTorch's: the same inputs pass
or fail on both sides, with the same exception class and (module names aside) the same
message."""
from __future__ import annotations

import math
import re
from collections import OrderedDict

import warnings

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf

# (label, builder(lib) -> (actual, expected), kwargs)
CASES = [
    ("equal", lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0])), {}),
    ("f32 within", lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6])), {}),
    ("f32 outside", lambda L: (L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 4.0])), {}),
    ("f64 tight", lambda L: (L.tensor([1.0], dtype=L.float64),
                             L.tensor([1.0 + 1e-6], dtype=L.float64)), {}),
    ("f64 within", lambda L: (L.tensor([1.0], dtype=L.float64),
                              L.tensor([1.0 + 1e-8], dtype=L.float64)), {}),
    ("f16", lambda L: (L.tensor([1.0, 2.0], dtype=L.float16),
                       L.tensor([1.0, 2.01], dtype=L.float16)), {}),
    ("bf16", lambda L: (L.tensor([1.0, 2.0], dtype=L.bfloat16),
                        L.tensor([1.0, 2.02], dtype=L.bfloat16)), {}),
    ("bf16 off", lambda L: (L.tensor([1.0, 2.0], dtype=L.bfloat16),
                            L.tensor([1.0, 2.5], dtype=L.bfloat16)), {}),
    ("0-d", lambda L: (L.tensor(1.0), L.tensor(2.0)), {}),
    ("0-d zero expected", lambda L: (L.tensor(1.0), L.tensor(0.0)), {}),
    ("int", lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 5, 3])), {}),
    ("int zero", lambda L: (L.tensor([1, 2, 3]), L.tensor([0, 2, 3])), {}),
    ("bool", lambda L: (L.tensor([True, False]), L.tensor([True, True])), {}),
    ("2-d index", lambda L: (L.arange(12.0).reshape(3, 4),
                             L.arange(12.0).reshape(3, 4) + L.eye(3, 4) * 0.5), {}),
    ("nan", lambda L: (L.tensor([NAN, 1.0]), L.tensor([NAN, 1.0])), {}),
    ("nan equal_nan", lambda L: (L.tensor([NAN, 1.0]), L.tensor([NAN, 1.0])),
     {"equal_nan": True}),
    ("inf", lambda L: (L.tensor([INF, 1.0]), L.tensor([INF, 1.0])), {}),
    ("inf sign", lambda L: (L.tensor([INF, 1.0]), L.tensor([-INF, 1.0])), {}),
    ("complex", lambda L: (L.tensor([1 + 1j, 2 + 0j]), L.tensor([1 + 1j, 2 + 0.5j])), {}),
    ("shape", lambda L: (L.zeros(2, 3), L.zeros(3, 2)), {}),
    ("dtype", lambda L: (L.zeros(2), L.zeros(2, dtype=L.float64)), {}),
    ("dtype unchecked", lambda L: (L.zeros(2), L.zeros(2, dtype=L.float64)),
     {"check_dtype": False}),
    ("dtype unchecked off", lambda L: (L.tensor([1.0]), L.tensor([1.5], dtype=L.float64)),
     {"check_dtype": False}),
    ("stride", lambda L: (L.zeros(2, 3).t(), L.zeros(3, 2)), {"check_stride": True}),
    ("stride unchecked", lambda L: (L.zeros(2, 3).t(), L.zeros(3, 2)), {}),
    ("explicit tol", lambda L: (L.tensor([1.0]), L.tensor([1.05])), {"rtol": 0.1, "atol": 0}),
    ("explicit tol off", lambda L: (L.tensor([1.0]), L.tensor([1.5])), {"rtol": 0.1, "atol": 0}),
    ("zero tol", lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6])),
     {"rtol": 0, "atol": 0}),
    ("only rtol", lambda L: (L.tensor([1.0]), L.tensor([1.0])), {"rtol": 0.1}),
    ("msg str", lambda L: (L.tensor([1.0]), L.tensor([2.0])), {"msg": "custom"}),
    ("msg callable", lambda L: (L.tensor([1.0]), L.tensor([2.0])),
     {"msg": lambda m: "wrapped: " + m}),
    ("ints", lambda L: (1, 1), {}),
    ("ints off", lambda L: (1, 2), {}),
    ("int float", lambda L: (1, 1.0), {}),
    ("int float unchecked", lambda L: (1, 1.0), {"check_dtype": False}),
    ("floats", lambda L: (1.0, 1.0 + 1e-9), {}),
    ("floats off", lambda L: (1.0, 1.1), {}),
    ("complex numbers", lambda L: (1 + 2j, 1 + 2.5j), {}),
    ("float nan", lambda L: (NAN, NAN), {}),
    ("float nan equal_nan", lambda L: (NAN, NAN), {"equal_nan": True}),
    ("bool vs int", lambda L: (True, 1), {}),
    ("numpy scalar", lambda L: (np.float64(1.0), 1.0), {}),
    ("bools", lambda L: (True, False), {}),
    ("none", lambda L: (None, None), {}),
    ("none vs 0", lambda L: (None, 0), {}),
    ("list", lambda L: ([1.0, L.tensor([1.0])], [1.0, L.tensor([1.0])]), {}),
    ("list off", lambda L: ([1.0, L.tensor([1.0, 2.0])], [1.0, L.tensor([1.0, 3.0])]), {}),
    ("list length", lambda L: ([1, 2], [1, 2, 3]), {}),
    ("tuple vs list", lambda L: ((L.zeros(2),), [L.zeros(2)]), {}),
    ("dict", lambda L: ({"a": L.ones(2), "b": 2.0}, OrderedDict(b=2.0, a=L.ones(2))), {}),
    ("dict off", lambda L: ({"a": L.ones(2), "b": {"c": 1}}, {"a": L.ones(2), "b": {"c": 2}}),
     {}),
    ("dict keys", lambda L: ({"a": 1, "b": 2}, {"a": 1, "c": 2}), {}),
    ("numpy arrays", lambda L: (np.array([1.0, 2.0]), np.array([1.0, 2.0])), {}),
    ("numpy arrays off", lambda L: (np.array([1.0, 2.0]), np.array([1.0, 2.5])), {}),
    ("numpy vs tensor", lambda L: (np.array([1.0]), L.tensor([1.0])), {}),
    ("parameter", lambda L: (L.nn.Parameter(L.ones(2)), L.ones(2)), {}),
    ("parameter strict", lambda L: (L.nn.Parameter(L.ones(2)), L.ones(2)),
     {"allow_subclasses": False}),
    ("string", lambda L: ("a", "a"), {}),
    ("empty", lambda L: (L.zeros(0), L.zeros(0)), {}),
    ("coo", lambda L: (L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
                       L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))), {}),
    ("coo values", lambda L: (L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
                              L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.5], (2, 2))), {}),
    ("coo nnz", lambda L: (L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
                           L.sparse_coo_tensor([[0], [1]], [1.0], (2, 2))), {}),
    ("csr values", lambda L: (L.tensor([[1.0, 0], [0, 2]]).to_sparse_csr(),
                              L.tensor([[1.0, 0], [0, 3]]).to_sparse_csr()), {}),
    ("csr cols", lambda L: (L.tensor([[1.0, 0], [0, 2]]).to_sparse_csr(),
                            L.tensor([[1.0, 0], [2, 0]]).to_sparse_csr()), {}),
    ("csr vs dense", lambda L: (L.tensor([[1.0, 0], [0, 2]]).to_sparse_csr(),
                                L.tensor([[1.0, 0], [0, 2]])), {}),
    ("csr vs dense unchecked", lambda L: (L.tensor([[1.0, 0], [0, 2]]).to_sparse_csr(),
                                          L.tensor([[1.0, 0], [0, 2]])), {"check_layout": False}),
    ("many mismatch", lambda L: (L.arange(100.0), L.arange(100.0) * 1.01), {}),
]


def _outcome(lib, build, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # PyTorch's sparse beta warnings
        actual, expected = build(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as exc:
        return type(exc), _normal(str(exc))
    return None, None


def _normal(text):
    text = text.replace("dispatchtorch.", "torch.")
    return re.sub(r"<class '[\w.]+'>", "<class>", text)     # Tensor classes live elsewhere


@pytest.mark.parametrize("label,build,kwargs", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_pytorch(label, build, kwargs):
    ours, theirs = _outcome(dt, build, kwargs), _outcome(torch, build, kwargs)
    assert ours[0] is theirs[0], (ours, theirs)
    if ours[0] is RuntimeError:     # PyTorch's adds a line asking for an issue report
        assert theirs[1].startswith(ours[1].rsplit(" resulted", 1)[0])
        return
    assert ours[1] == theirs[1]


def test_fails_at_all():
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        dt.testing.assert_close(dt.tensor([1.0, 2.0]), dt.tensor([1.0, 3.0]))


def test_meta_tensors_compare_attributes_only():
    dt.testing.assert_close(dt.zeros(2, device="meta"), dt.zeros(2, device="meta"))
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        dt.testing.assert_close(dt.zeros(2, device="meta"), dt.zeros(3, device="meta"))


@pytest.mark.parametrize("pair", [
    ([1.0, 2.0], [1.0, 2.00001]), ([1.0, 2.0], [1.0, 2.1]), ([1, 2], [1, 2]),
    ([[NAN]], [[NAN]]), (3.0, 3.0001)])
def test_assert_allclose_agrees(pair):
    results = []
    for lib in (dt, torch):
        a, e = pair
        with pytest.warns(FutureWarning, match="assert_allclose"):
            try:
                lib.testing.assert_allclose(lib.tensor(a), e)
                results.append(None)
            except AssertionError as exc:
                results.append(_normal(str(exc)))
    assert results[0] == results[1]
