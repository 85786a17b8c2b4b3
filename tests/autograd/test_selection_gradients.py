"""Gradients of the selecting reductions against PyTorch 2.13's rules (derivatives.yaml):
max() / min() of all elements use evenly_distribute_backward (ties share g, the others
get +0.0 even for an inf g, a NaN result's g goes to the NaNs), amax / amin
scale_grad_by_count (inf * 0 = NaN off the maximum), and max / min / median / kthvalue
along a dim value_selecting_reduction_backward (g scattered to the returned index). The
expected values are PyTorch's, written out."""
import math

import pytest

import dispatchtorch as torch
from test_special_value_gradients import _dev, _same_bits

inf, nan = math.inf, math.nan


def _grad(f, x, g, dev, dtype=torch.float32):
    x = torch.tensor(x, dtype=dtype, device=dev, requires_grad=True)
    f(x).backward(torch.tensor(g, dtype=dtype, device=dev))
    return x.grad.cpu().numpy()


FULL = [  # (function, input, incoming gradient, PyTorch 2.13's gradient)
    (lambda x: x.max(), [1.0, 3.0, 3.0, 2.0], inf, [0.0, inf, inf, 0.0]),
    (lambda x: x.max(), [1.0, 3.0, 3.0, 2.0], -1.0, [0.0, -0.5, -0.5, 0.0]),
    (lambda x: x.max(), [1.0, nan, nan, 2.0], 1.0, [0.0, 0.5, 0.5, 0.0]),
    (lambda x: x.min(), [1.0, nan, 0.0, nan], -inf, [0.0, -inf, 0.0, -inf]),
    (lambda x: x.min(), [[0.0, -1.0], [-1.0, 5.0]], nan, [[0.0, nan], [nan, 0.0]]),
    # amax / amin: (g / count) * mask, so inf * 0 = NaN off the maximum, and a NaN maximum
    # matches nothing (0 / 0)
    (lambda x: x.amax(), [1.0, 3.0, 3.0, 2.0], inf, [nan, inf, inf, nan]),
    (lambda x: x.amax(), [1.0, nan, nan, 2.0], 1.0, [nan, nan, nan, nan]),
    (lambda x: x.amin(), [1.0, 0.0, 0.0, 2.0], 2.0, [0.0, 1.0, 1.0, 0.0]),
]


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("case", range(len(FULL)))
def test_full_reduction_gradient_is_pytorchs(dev, case):
    f, x, g, want = FULL[case]
    _same_bits(_grad(f, x, g, _dev(dev)), want)


DIM = [
    (lambda x: x.max(1).values, [[1.0, 3.0, 3.0, 2.0], [0.0, -0.0, 0.0, -0.0]], [-0.0, -0.0],
     [[0.0, -0.0, 0.0, 0.0], [-0.0, 0.0, 0.0, 0.0]]),
    (lambda x: x.min(0, keepdim=True).values, [[1.0, 3.0], [0.0, 4.0]], [[-0.0, 2.0]],
     [[0.0, 2.0], [-0.0, 0.0]]),
    (lambda x: x.median(1).values, [[1.0, 3.0, 2.0], [0.0, 7.0, 5.0]], [-0.0, inf],
     [[0.0, 0.0, -0.0], [0.0, 0.0, inf]]),
    (lambda x: x.nanmedian(1).values, [[1.0, nan, 2.0], [nan, 7.0, nan]], [-0.0, inf],
     [[-0.0, 0.0, 0.0], [0.0, inf, 0.0]]),
    (lambda x: x.kthvalue(2, 1).values, [[1.0, 3.0, 2.0], [0.0, 7.0, 5.0]], [-0.0, inf],
     [[0.0, 0.0, -0.0], [0.0, 0.0, inf]]),
]


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
@pytest.mark.parametrize("case", range(len(DIM)))
def test_gradient_along_a_dim_goes_to_the_returned_index(dev, case):
    # a scatter into zeros (PyTorch) keeps a -0.0 g; the gather's scatter_add gave +0.0
    f, x, g, want = DIM[case]
    _same_bits(_grad(f, x, g, _dev(dev)), want)


def test_max_of_all_elements_double_backward():
    # the rule is written in public ops: the gradient of sum(g * d max / dx) wrt g
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    g = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad(x.max(), x, g, create_graph=True)
    _same_bits(gx.detach().numpy(), [0.0, 1.0, 1.0, 0.0])
    (gg,) = torch.autograd.grad((gx * torch.tensor([1.0, 2.0, 4.0, 8.0],
                                                   dtype=torch.float64)).sum(), g)
    assert gg.item() == 3.0
    (gx,) = torch.autograd.grad(x.max(0).values, x, g, create_graph=True)
    (gg,) = torch.autograd.grad((gx * torch.tensor([1.0, 2.0, 4.0, 8.0],
                                                   dtype=torch.float64)).sum(), g)
    assert gg.item() == 2.0       # index 1, the first maximum


def test_against_live_pytorch_when_installed():
    real = pytest.importorskip("torch")
    for f, x, g, _ in FULL + DIM:
        t = real.tensor(x, requires_grad=True)
        f(t).backward(real.tensor(g))
        _same_bits(_grad(f, x, g, "cpu"), t.grad.numpy())
