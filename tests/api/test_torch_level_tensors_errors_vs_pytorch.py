"""_torch_level/tensors.py's functions and linalg.multi_dot (chain_matmul's) called
wrongly, against PyTorch: the same exception class and message (non-tensor inputs,
empty_strided's size and stride checks, norm_except_dim's int arguments and dims,
multi_dot's rank, dtype and shape checks, range's printed bounds); and the values of
the calls whose handling changed with them (nuclear_norm's int dim)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402
from raised_as_pytorch import raised as _raised  # noqa: E402

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)

CALLS = {
    "detach_int": lambda L: L.detach(1),
    "detach__int": lambda L: L.detach_(1),
    "get_device_int": lambda L: L.get_device(1),
    "is_neg_int": lambda L: L.is_neg(1),
    "empty_strided_size_int": lambda L: L.empty_strided(2, 1),
    "empty_strided_float_size": lambda L: L.empty_strided((2.0, 3), (1, 2)),
    "empty_strided_float_stride": lambda L: L.empty_strided((2, 3), (1.0, 2)),
    "empty_strided_lengths": lambda L: L.empty_strided((2, 3), (1,)),
    "empty_strided_negative_size": lambda L: L.empty_strided((2, -1), (1, 1)),
    "empty_strided_negative_stride": lambda L: L.empty_strided((2, 3), (-1, 1)),
    "norm_except_dim_float_pow": lambda L: L.norm_except_dim(L.tensor(X), 2.0, 0),
    "norm_except_dim_bool_pow": lambda L: L.norm_except_dim(L.tensor(X), True, 0),
    "norm_except_dim_float_dim": lambda L: L.norm_except_dim(L.tensor(X), 2, 1.0),
    "norm_except_dim_dim_range": lambda L: L.norm_except_dim(L.tensor(X), 2, 2),
    "norm_except_dim_dim_range_neg": lambda L: L.norm_except_dim(L.tensor(X), 2, -3),
    "norm_except_dim_0d": lambda L: L.norm_except_dim(L.tensor(3.0), 2, 0),
    "norm_except_dim_int_dtype": lambda L: L.norm_except_dim(L.ones(2, 3, dtype=L.int64), 2, 0),
    "unravel_float_in_shape": lambda L: L.unravel_index(L.tensor([1]), (3, 4.0)),
    "unravel_float_shape": lambda L: L.unravel_index(L.tensor([1]), 4.0),
    "range_inf": lambda L: L.range(0, float("inf")),
    "range_nan": lambda L: L.range(0.5, float("nan")),
    "multi_dot_dtype": lambda L: L.linalg.multi_dot([L.tensor(X), L.tensor(X.T).double()]),
    "multi_dot_half": lambda L: L.linalg.multi_dot([L.tensor(X).half(), L.tensor(X.T)]),
    "multi_dot_shapes": lambda L: L.linalg.multi_dot([L.tensor(X), L.tensor(X)]),
    "multi_dot_shapes_later": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 4),
                                                            L.ones(5, 1)]),
    "multi_dot_vector_first": lambda L: L.linalg.multi_dot([L.ones(3), L.ones(4, 2)]),
    "multi_dot_first_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2, 2), L.tensor(X)]),
    "multi_dot_last_3d": lambda L: L.linalg.multi_dot([L.tensor(X), L.ones(2, 2, 2)]),
    "multi_dot_middle_1d": lambda L: L.linalg.multi_dot([L.tensor(X), L.ones(4),
                                                         L.tensor(X.T)]),
    "chain_matmul_shapes": lambda L: L.chain_matmul(L.tensor(X), L.tensor(X)),
    "nuclear_norm_int_dim": lambda L: L.nuclear_norm(L.tensor(X), 0),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_raises_as_pytorch(name):
    assert _raised(dt, CALLS[name]) == _raised(torch, CALLS[name])


def test_accepted_forms_give_pytorch_values():
    for call in (lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 4), L.ones(4)]),
                 lambda L: L.linalg.multi_dot([L.ones(4), L.ones(4)]),
                 lambda L: L.norm_except_dim(L.tensor(X), 3, -1),
                 lambda L: L.norm_except_dim(L.tensor(X), 2, -2),
                 lambda L: L.empty_strided((2, 0), (0, 1)).new_zeros(0),
                 lambda L: L.range(0.1, 0.35, 0.05)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = call(dt), call(torch)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert dt.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
