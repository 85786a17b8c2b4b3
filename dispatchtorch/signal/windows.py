"""torch.signal.windows: window functions written in public ops, as PyTorch's own
Python implementations define them (sym=True: symmetric; False: periodic, for spectra)."""
from __future__ import annotations

import math

from .._layout import require_strided as _require_strided
from .. import ops as _ops
from .._dtype import float32, float64, get_default_dtype

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check(name, M, dtype, layout=None):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if dtype is not None and dtype not in (float32, float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(M, dtype, device, requires_grad):
    """M = 0: empty; M = 1: a single one."""
    dtype = dtype or get_default_dtype()
    if M == 0:
        return _ops.empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    return _ops.ones(1, dtype=dtype, device=device, requires_grad=requires_grad)


def _k(start, step, M, dtype, device):
    return _ops.linspace(start, start + (M - 1) * step, M, dtype=dtype or get_default_dtype(),
                         device=device)


def _finish(w, requires_grad):
    return w.requires_grad_(True) if requires_grad else w


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    _require_strided(layout, "exponential")
    _check("exponential", M, dtype)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _k(-center / tau, 1 / tau, M, dtype, device)
    return _finish(_ops.exp(-k.abs()), requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "cosine")
    _check("cosine", M, dtype)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    return _finish(_ops.sin(_k(0.5 * c, c, M, dtype, device)), requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "gaussian")
    _check("gaussian", M, dtype)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _k(start * c, c, M, dtype, device)
    return _finish(_ops.exp(-k * k), requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "kaiser")
    _check("kaiser", M, dtype)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if beta == 0:
        return _finish(_ops.ones(M, dtype=dtype or get_default_dtype(), device=device),
                       requires_grad)
    start = -beta
    c = 2.0 * beta / (M if not sym else M - 1)
    end = min(start + (M - 1) * c, beta)
    k = _ops.linspace(start, end, M, dtype=dtype or get_default_dtype(), device=device)
    num = _ops.i0(_ops.sqrt((beta * beta - k * k).clamp(min=0)))
    return _finish(num / _ops.i0(_ops.full((), beta, dtype=k.dtype, device=device)),
                   requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "general_cosine")
    _check("general_cosine", M, dtype)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, (list, tuple)) and not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not len(a):
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _k(0.0, c, M, dtype, device)
    w = None
    for i, ai in enumerate(a):
        term = _ops.cos(k * i) * ((-1) ** i * ai)
        w = term if w is None else w + term
    return _finish(w, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    _require_strided(layout, "general_hamming")
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "hamming")
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "hann")
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "blackman")
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "nuttall")
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    _require_strided(layout, "bartlett")
    _check("bartlett", M, dtype)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -1
    c = 2 / (M if not sym else M - 1)
    k = _k(start, c, M, dtype, device)
    return _finish(1 - k.abs(), requires_grad)
