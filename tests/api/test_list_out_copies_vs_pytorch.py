"""The `*_copy` ops whose result is a list of tensors (ATen's `Tensor(a!)[] out`
variants: unbind_copy, split_with_sizes_copy, split_copy) return None with out=, as
PyTorch, write each piece into out, and refuse a bad out as PyTorch's parser does."""
import warnings

import numpy as np
import pytest
import torch

import dispatchtorch as dt

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)
CALLS = {
    "unbind_copy": (lambda lib, **kw: lib.unbind_copy(lib.tensor(X), 1, **kw), 4, True),
    "split_with_sizes_copy": (lambda lib, **kw: lib.split_with_sizes_copy(lib.tensor(X), [1, 3],
                                                                          1, **kw), 2, True),
    # split_copy writes as copy_ does (broadcast, no resize), as ATen's
    "split_copy": (lambda lib, **kw: lib.split_copy(lib.tensor(X), 2, 0, **kw), 2, False),
}


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # PyTorch's "output ... was resized"
        try:
            return "ok", fn()
        except Exception as e:                  # noqa: BLE001 - class and message compared
            return type(e).__name__, str(e).split(": ")[-1] if "Expected out" in str(e) else str(e)


@pytest.mark.parametrize("name", CALLS)
def test_out_returns_none_and_holds_the_pieces(name):
    call, n, resizes = CALLS[name]
    for lib in (torch, dt):
        want = call(lib)
        assert len(want) == n
        out = [lib.zeros_like(t) for t in want]
        assert call(lib, out=out) is None
        assert [t.tolist() for t in out] == [t.tolist() for t in want]
        if resizes:
            out = tuple(lib.empty(0) for _ in range(n))
            assert call(lib, out=out) is None
            assert [t.tolist() for t in out] == [t.tolist() for t in want]


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("bad", ["short", "long", "tensor", "int_element", "int64"])
def test_bad_out_refused_as_pytorch(name, bad):
    call, n, _ = CALLS[name]

    def make(lib):
        return {"short": lambda: [lib.empty(0)] * (n - 1),
                "long": lambda: [lib.empty(0) for _ in range(n + 1)],
                "tensor": lambda: lib.empty(0),
                "int_element": lambda: [lib.empty(0)] + [1] * (n - 1),
                "int64": lambda: [lib.empty(0, dtype=lib.int64) for _ in range(n)]}[bad]()
    want = _outcome(lambda: call(torch, out=make(torch)))
    got = _outcome(lambda: call(dt, out=make(dt)))
    assert got == want
