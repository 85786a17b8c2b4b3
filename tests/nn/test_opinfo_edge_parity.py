"""nn.functional edge cases PyTorch's OpInfo samples found, against PyTorch: pools and
convolutions given 1-element tuples, group_norm and batch_norm of empty inputs,
batch_norm of 1-d input, normalize with p=0 and fractional p."""
from __future__ import annotations

import numpy as np
import pytest
from parity import compare_call

import dispatchtorch as dt
import dispatchtorch.nn.functional as F

rng = np.random.default_rng(11)


def r(*shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("name,x,args,kw", [
    ("avg_pool2d", (2, 3, 9, 9), ((3, 3), (1, 1), (1,), True, False, 2), {}),
    ("avg_pool2d", (1, 2, 6, 6), ((4, 4), (2, 2), (2,), True, True, None), {}),
    ("max_pool2d", (1, 1, 6, 6), ((3,),), {"stride": (1,), "padding": (1,)}),
    ("avg_pool3d", (1, 1, 4, 4, 4), (2,), {"padding": (1,)}),
])
def test_one_element_tuples_cover_every_dim(torch, name, x, args, kw):
    compare_call(torch, getattr(F, name), getattr(torch.nn.functional, name), (r(*x),) + args,
                 kw, rtol=1e-10, atol=1e-12)


def test_conv2d_one_element_padding(torch):
    compare_call(torch, F.conv2d, torch.nn.functional.conv2d, (r(1, 1, 5, 5), r(2, 1, 2, 2)),
                 {"padding": (1,), "stride": (2,)}, rtol=1e-10, atol=1e-12)


def test_group_norm_of_an_empty_batch(torch):
    compare_call(torch, F.group_norm, torch.nn.functional.group_norm, (r(0, 2), 1, r(2), r(2)))


def test_batch_norm_of_empty_and_1d_inputs(torch):
    for training in (True, False):
        compare_call(torch, F.batch_norm, torch.nn.functional.batch_norm,
                     (r(0), r(0), np.ones(0), None, None, training))
    for lib, f in ((torch, torch.nn.functional.batch_norm), (dt, F.batch_norm)):
        with pytest.raises(RuntimeError, match="running_mean should contain 0 elements not 3"):
            f(lib.zeros(3), lib.zeros(3), lib.ones(3))
        with pytest.raises(IndexError, match="Dimension out of range"):
            f(lib.zeros(3), lib.zeros(0), lib.ones(0))


@pytest.mark.parametrize("p", [0.0, 0.5, 3.0])
def test_normalize_with_any_p(torch, p):
    x = r(2, 3, 4)
    x[0, 1] = 0.0
    compare_call(torch, F.normalize, torch.nn.functional.normalize, (x,), {"p": p, "dim": -1},
                 rtol=1e-10, atol=1e-12, grad=p != 0.0)


@pytest.mark.parametrize("pads", [(-1, 1, -2, 1), (2, -1, 1, -2), (-2, -1, 3, 0)])
def test_circular_pad_with_negative_pads_wraps_the_cropped_input(torch, pads):
    compare_call(torch, F.pad, torch.nn.functional.pad, (r(1, 2, 4, 5), pads, "circular"),
                 rtol=1e-10, atol=1e-12)
