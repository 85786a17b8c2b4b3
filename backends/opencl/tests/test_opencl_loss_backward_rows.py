"""The backward rows with OpenCL kernels of their own (kernels/softmax_backward.py,
nll_loss.py's nll_loss_backward) against the CPU backend's kernels: every dim and
layout, NaN/inf, rows of -0.0 terms (the sum's sign), a 0-d input, float16 and float64;
nll_loss_backward's reductions, class weights, ignored targets (a batch all ignored),
a class dim in the middle, a 1-d input and the long-input path; and each row one
launch, where the decompositions were five to eleven."""
from __future__ import annotations

import numpy as np
import pytest

from _nll_cases import nll_cases

import dispatchtorch as torch
from dispatchtorch_opencl.device import Device
from dispatchtorch_opencl.kernels import nll_loss as nll_kernels

F = torch.nn.functional


def _grad(dev, fn, x, *rest, g=None):
    """d fn(x, *rest) / dx for the output gradient g (default ones), on dev."""
    xs = torch.tensor(x, device=dev, requires_grad=True)
    out = fn(xs, *(torch.tensor(a, device=dev) if isinstance(a, np.ndarray) else a for a in rest))
    go = torch.ones_like(out) if g is None else torch.tensor(g, device=dev)
    return torch.autograd.grad(out, xs, go)[0]


def _same_as_cpu(fn, x, *rest, g=None, rtol=1e-6, atol=1e-7, signs=False):
    c, o = (_grad(dev, fn, x, *rest, g=g) for dev in ("cpu", "opencl"))
    assert str(o.device).startswith("opencl") and c.dtype == o.dtype and c.shape == o.shape
    c, o = c.numpy().astype(np.float64), o.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(o, c, rtol=rtol, atol=atol, equal_nan=True)
    if signs:                           # zeros with the CPU reference's signs
        np.testing.assert_array_equal(np.signbit(o[o == 0]), np.signbit(c[c == 0]))


def _launches(fn):
    """The kernel descriptions fn() queues on OpenCL."""
    seen, real = [], Device.launch

    def count(self, kernel, gsize, lsize, args, what):
        seen.append(what)
        return real(self, kernel, gsize, lsize, args, what)
    Device.launch = count
    try:
        fn()
    finally:
        Device.launch = real
    return seen


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_backward_rows(ocl, rng, fn):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    g = rng.standard_normal((3, 4, 5)).astype(np.float32)
    a[0, 1, 2] = np.nan
    g[1, 2, 3] = np.inf
    for dim in (0, 1, 2, -1):
        _same_as_cpu(lambda x: fn(x, dim=dim), a, g=g, rtol=1e-5, atol=1e-6)
        _same_as_cpu(lambda x: fn(x.transpose(0, 2), dim=dim), a, g=g.transpose(2, 1, 0).copy(),
                     rtol=1e-5, atol=1e-6)
    _same_as_cpu(lambda x: fn(x, dim=0), a[0, 0, 0], g=g[0, 0, 0], rtol=1e-6)     # 0-d
    _same_as_cpu(lambda x: fn(x.half(), dim=1), a, g=g.astype(np.float16), rtol=2e-3, atol=1e-3)
    _same_as_cpu(lambda x: fn(x, dim=1), a.astype(np.float64), g=g.astype(np.float64),
                 rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_a_row_of_negative_zero_terms_sums_as_the_reference(ocl, fn):
    """The last dim's sum starts from the row's first term (-0.0 for a row of -0.0),
    the other dims' from +0.0: the zeros of the gradient keep the reference's signs."""
    a = np.zeros((3, 4), np.float32)
    a[1] = [1.0, -2.0, 0.5, 3.0]
    g = np.full((3, 4), -0.0, np.float32)
    g[2] = [0.0, -0.0, 0.0, -0.0]
    for dim in (0, 1):
        _same_as_cpu(lambda x: fn(x, dim=dim), a, g=g, signs=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_backward_rows(ocl, rng, reduction):
    x, t, w, cases = nll_cases(rng)
    cases += [(x[:4], t[[2, 7, 2, 7]], w, 3)]
    for xi, ti, wi, ignore in cases:   # (the last: every target ignored)
        g = rng.standard_normal(ti.shape).astype(np.float32) if reduction == "none" else None
        _same_as_cpu(lambda a, b, c: F.nll_loss(a, b, c, reduction=reduction, ignore_index=ignore),
                     xi, ti, wi, g=g, signs=True)
    _same_as_cpu(lambda a, b: F.nll_loss(a.t(), b, reduction=reduction), x.T.copy(), t)
    _same_as_cpu(lambda a, b: F.nll_loss(a, b, reduction=reduction), x.astype(np.float64), t,
                 g=None if reduction != "none" else rng.standard_normal(16), rtol=1e-13)
    _same_as_cpu(lambda a, b: F.nll_loss(a.half(), b, reduction=reduction), x, t,
                 g=None if reduction != "none" else np.ones(16, np.float16), rtol=1e-3)


def test_nll_loss_backward_long_input(ocl, rng, monkeypatch):
    """Past SERIAL targets 'mean' sums the weights through the forward's parts launch
    and the sum kernel."""
    monkeypatch.setattr(nll_kernels, "SERIAL", 8)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    t = rng.integers(0, 3, 40)
    w = rng.random(3).astype(np.float32)
    for reduction in ("mean", "sum"):
        _same_as_cpu(lambda a, b, c: F.nll_loss(a, b, c, reduction=reduction, ignore_index=1),
                     x, t, w)


def test_cross_entropys_backward_is_two_launches(ocl, rng):
    """cross_entropy's backward: the nll_loss_backward and log_softmax_backward rows, one
    launch each (the decompositions queued sixteen)."""
    x = torch.tensor(rng.standard_normal((128, 10)).astype(np.float32), device="opencl",
                     requires_grad=True)
    t = torch.tensor(rng.integers(0, 10, 128), device="opencl")
    loss = F.cross_entropy(x, t)
    seen = _launches(lambda: torch.autograd.grad(loss, x))
    assert sorted(seen) == ["log_softmax_backward (float32)", "nll_loss_backward (float32)"], seen
