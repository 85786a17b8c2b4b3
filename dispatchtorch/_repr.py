"""Tensor printing, character for character as PyTorch's `torch/_tensor_str.py`.

The rules are PyTorch's (one width for every element, chosen from the nonzero finite
values; fixed, integer or scientific notation; summarisation past `threshold`; line
wrapping at `linewidth`; the `device=`, `dtype=`, `grad_fn=` suffixes). They run on a
host copy of the values, which is all printing needs. The one deliberate difference:
a dtype suffix names this module (`dtype=dispatchtorch.float64`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """As torch.set_printoptions: a profile first, then the options given."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One element width and notation for a whole tensor (PyTorch's `_Formatter`)."""

    def __init__(self, values, floating, zero=0.0):
        """zero: what PyTorch's `ne(0)` compares with (float8_e8m0fnu has no 0: its 0 is
        2**-127, which PyTorch then prints as `0.`)."""
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.ravel()
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        flat = flat.astype(np.float64)
        vals = flat[np.isfinite(flat) & (flat != zero)]
        if vals.size == 0:
            return
        mags = np.abs(vals)
        lo, hi = mags.min(), mags.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        sci = PRINT_OPTS.sci_mode
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if sci is None else sci
        p = PRINT_OPTS.precision
        if self.sci_mode:
            texts, extra = [f"{v:.{p}e}" for v in vals.tolist()], 0
        elif self.int_mode:
            texts, extra = [f"{v:.0f}" for v in vals.tolist()], 1   # the trailing "."
        else:
            texts, extra = [f"{v:.{p}f}" for v in vals.tolist()], 0
        self.max_width = max(self.max_width, max(len(s) for s in texts) + extra)

    def format(self, value):
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """A real and an imaginary formatter, joined as PyTorch writes `1.+2.j`."""

    def __init__(self, values):
        self.real = _Formatter(values.real, True)
        self.imag = _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sep = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sep + imag


def _summarized(a):
    """The values shown when summarising: edgeitems from each end of every dim."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim > 1 and not e:
        return a[(slice(0, 0),) * a.ndim]
    if a.shape[0] > 2 * e:
        a = np.concatenate([a[:e], a[-e:]])
    if a.ndim == 1:
        return a
    return np.stack([_summarized(row) for row in a])


def _vector(a, indent, summarize, fmt):
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        items = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        items = ([fmt.format(v) for v in a[:e].tolist()] + [" ..."]
                 + [fmt.format(v) for v in a[-e:].tolist()])
    else:
        items = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    rows = range(a.shape[0])
    if summarize and a.shape[0] > 2 * e:
        parts = ([_nested(a[i], indent + 1, summarize, fmt) for i in rows[:e]] + ["..."]
                 + [_nested(a[i], indent + 1, summarize, fmt) for i in rows[len(rows) - e:]])
    else:
        parts = [_nested(a[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _values_str(a, dtype, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    if getattr(dtype, "is_complex", False):
        fmt = _ComplexFormatter(shown)
    else:
        fmt = _Formatter(shown, dtype.is_floating_point,
                         2.0 ** -127 if dtype.name == "float8_e8m0fnu" else 0.0)
    return _nested(a, indent, summarize, fmt)


def _with_suffixes(text, suffixes, indent):
    """PyTorch's `_add_suffixes`: a suffix that would pass linewidth starts a new line."""
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    out.append(")")
    return "".join(out)


def _host_values(t):
    a = np.asarray(t._host())
    if t._dtype.name == "bfloat16" or t._dtype.bare and t._dtype.is_floating_point:
        a = a.astype(np.float32)
    return a


def tensor_repr(t, tensor_contents=None):
    from ._dtype import get_default_dtype, int64
    cls = type(t)
    plain = cls.__name__ == "Tensor" or cls.__module__ == "dispatchtorch.nn.parameter"
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    dt, shape = t._dtype, tuple(t._shape)
    suffixes = []
    if t._place.type != "cpu":
        suffixes.append(f"device='{t._place.device}'")
    default = get_default_dtype()
    complex_default = "complex128" if default.name == "float64" else "complex64"
    has_default_dtype = dt is default or dt is int64 or dt.name in ("bool", complex_default)
    if t._place.type == "meta":
        suffixes.append(f"size={shape}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "..."
    elif math.prod(shape) == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if not has_default_dtype:
            suffixes.append(f"dtype={dt!r}")
        body = None
    if tensor_contents is not None:
        body = tensor_contents
    elif body is None:
        body = _values_str(_host_values(t), dt, indent)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)
