"""torch.hann_window and its siblings: the top-level window factories that torch.stft's
callers pass as `window=`. PyTorch's defaults differ from torch.signal.windows': periodic
(the DFT-even window, `sym=False`) unless `periodic=False`, and any floating dtype
(computed in float32 or float64, then rounded once)."""
from __future__ import annotations

from .. import _dtype as D
from .._layout import require_strided as _require_strided
from . import windows as _w

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _make(op, build, window_length, periodic, dtype, layout, device, requires_grad):
    _require_strided(layout, op)
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{op}(): argument 'window_length' must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length="
                           f"{window_length}")
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dt}")
    exact = dt if dt in (D.float32, D.float64) else D.float32
    w = build(window_length, sym=not periodic, dtype=exact, device=device)
    if exact is not dt:
        w = w.to(dt)
    return w.requires_grad_(True) if requires_grad else w


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _make("hann_window", _w.hann, window_length, periodic, dtype, layout, device,
                 requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    def build(n, **kw):          # alpha - beta cos(...): general_cosine's [alpha, beta]
        return _w.general_cosine(n, a=[alpha, beta], **kw)
    return _make("hamming_window", build, window_length, periodic, dtype, layout, device,
                 requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _make("blackman_window", _w.blackman, window_length, periodic, dtype, layout,
                 device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _make("bartlett_window", _w.bartlett, window_length, periodic, dtype, layout,
                 device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    def build(n, **kw):
        return _w.kaiser(n, beta=beta, **kw)
    return _make("kaiser_window", build, window_length, periodic, dtype, layout, device,
                 requires_grad)
