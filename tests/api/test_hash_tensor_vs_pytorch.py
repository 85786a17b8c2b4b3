"""torch.hash_tensor against PyTorch 2.13, bit for bit: every OpInfo sample in every dtype
OpInfo lists for it, its refusals, and its out=."""
import warnings

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import dispatchtorch as dt

INFO = next(i for i in op_db if i.name == "hash_tensor")
DTYPES = sorted(INFO.supported_dtypes("cpu"), key=str)


def _to_dt(x):
    if isinstance(x, torch.Tensor):
        return dt.tensor(x.tolist(), dtype=getattr(dt, str(x.dtype).split(".")[-1]))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_dt(v) for v in x)
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opinfo_samples_bit_for_bit(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = list(INFO.sample_inputs("cpu", dtype))
    assert samples
    for s in samples:
        want = torch.hash_tensor(s.input, *s.args, **s.kwargs)
        got = dt.hash_tensor(_to_dt(s.input), *_to_dt(s.args), **_to_dt(s.kwargs))
        assert str(got.dtype) == "dispatchtorch.uint64" and tuple(got.shape) == tuple(want.shape)
        assert got.tolist() == want.tolist(), (s.input.shape, s.args, s.kwargs)


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:                     # noqa: BLE001 - class and message compared
        return type(e).__name__, str(e)
    return r.tolist(), tuple(r.shape)


@pytest.mark.parametrize("case", [
    lambda L: L.hash_tensor(L.arange(6.).reshape(2, 3), mode=1),
    lambda L: L.hash_tensor(L.arange(6.).reshape(2, 3), 2),
    lambda L: L.hash_tensor(L.empty(0)),
    lambda L: L.hash_tensor(L.empty(0, 3), 0),
    lambda L: L.hash_tensor(L.empty(0, 3), 1),
    lambda L: L.hash_tensor(L.tensor([1, 2], dtype=L.uint16)),
    lambda L: L.hash_tensor(L.tensor([1.0], dtype=L.float8_e4m3fn)),
    lambda L: L.hash_tensor(L.tensor([1 + 2j])),
    lambda L: L.hash_tensor(L.tensor([float("nan"), -0.0, float("inf")])),
    lambda L: L.hash_tensor(L.tensor([-1, 7], dtype=L.int8)),
    lambda L: L.hash_tensor(L.tensor(3.0), 0, keepdim=True),
    lambda L: L.hash_tensor(L.arange(105).reshape(7, 5, 3), (0, 2), keepdim=True),
    lambda L: L.hash_tensor(L.ones(3, requires_grad=True)),
])
def test_edges_and_refusals(case):
    assert _outcome(dt, case) == _outcome(torch, case)


def test_out():
    for lib in (torch, dt):
        out = lib.empty(0, dtype=lib.uint64)
        r = lib.hash_tensor(lib.arange(6.).reshape(2, 3), 1, out=out)
        assert r is out and np.array_equal(np.array(out.tolist(), dtype=np.uint64),
                                           np.array([9218868437227405312, 4615063718147915776],
                                                    dtype=np.uint64))
