"""Tensor printing in PyTorch's style: `tensor([1.5000, 2.0000], dtype=...)`."""
from __future__ import annotations

import numpy as np

PRINT_OPTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    if profile == "default":
        PRINT_OPTS.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        PRINT_OPTS.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        PRINT_OPTS.update(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            PRINT_OPTS[k] = v
    PRINT_OPTS["sci_mode"] = sci_mode


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    prec = PRINT_OPTS["precision"]
    if finite.size == 0:
        return lambda x: _special(x) or f"{x}"
    absf = np.abs(finite)
    nonzero = absf[absf > 0]
    if np.all(finite == np.round(finite)):
        hi = absf.max()
        if hi < 1e8 and PRINT_OPTS["sci_mode"] is not True:
            return lambda x: _special(x) or f"{x:.0f}."
        return lambda x: _special(x) or f"{x:.{prec}e}"
    sci = PRINT_OPTS["sci_mode"]
    if sci is None:
        sci = nonzero.size > 0 and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8
                                    or nonzero.min() < 1e-4)
    if sci:
        return lambda x: _special(x) or f"{x:.{prec}e}"
    return lambda x: _special(x) or f"{x:.{prec}f}"


def _special(x):
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return None


def _format_array(a, dtype):
    if a.dtype == np.bool_:
        fmt = lambda x: "True" if x else "False"   # noqa: E731
    elif dtype.is_floating_point:
        a = a.astype(np.float64)
        fmt = _float_formatter(a.ravel())
    else:
        fmt = str
    summarize = a.size > PRINT_OPTS["threshold"]
    return np.array2string(a, max_line_width=PRINT_OPTS["linewidth"], separator=", ",
                           formatter={"all": fmt}, threshold=0 if summarize else a.size + 1,
                           edgeitems=PRINT_OPTS["edgeitems"], prefix="tensor(")


def tensor_repr(t):
    from ._dtype import get_default_dtype, int64, float32
    suffixes = []
    if t._place.type != "cpu":
        suffixes.append(f"device='{t._place.device}'")
    if t._place.type == "meta":
        body = "..."
        suffixes.insert(0, f"size={tuple(t._shape)}")
    else:
        a = t._host()
        if t._dtype.name == "bfloat16":
            a = a.astype(np.float32)
        body = _format_array(np.asarray(a), t._dtype) if a.size else "[]"
        if a.size == 0 and t._shape != (0,):
            suffixes.insert(0, f"size={tuple(t._shape)}")
    default = (t._dtype is get_default_dtype() or t._dtype is int64 or t._dtype.name == "bool"
               or (t._dtype is float32 and get_default_dtype() is float32))
    if not default or (t._dtype.is_floating_point and t._dtype is not get_default_dtype()):
        suffixes.append(f"dtype={t._dtype!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    inner = ", ".join([body] + suffixes)
    return f"tensor({inner})"
