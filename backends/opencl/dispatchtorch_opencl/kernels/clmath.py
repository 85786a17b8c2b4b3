"""OpenCL C helpers for the math OpenCL lacks: erfinv and exact integer powers."""
from __future__ import annotations

from .. import cltypes as T

# PyTorch's calc_erfinv (a rational first guess, then two Newton steps). Past the
# central range the Newton residual is taken from erfc, where 1 - |y| is exact, so
# the tails keep full relative precision.
_ERFINV = r"""
inline {t} {name}({t} y) {{
    {t} ya = y < ({t})0 ? -y : y;
    if (!(ya <= ({t})1)) return ({t})NAN;
    if (ya == ({t})1) return y > ({t})0 ? ({t})INFINITY : -({t})INFINITY;
    const {t} k = ({t})1.1283791670955126;   /* 2 / sqrt(pi) */
    {t} x;
    if (ya <= ({t})0.7) {{
        {t} z = y * y;
        {t} num = ((({t})-0.140543331 * z + ({t})0.914624893) * z + ({t})-1.645349621) * z + ({t})0.886226899;
        {t} dem = (((({t})0.012229801 * z + ({t})-0.329097515) * z + ({t})1.442710462) * z + ({t})-2.118377725) * z + ({t})1;
        x = y * num / dem;
        x = x - (erf(x) - y) / (k * exp(-x * x));
        x = x - (erf(x) - y) / (k * exp(-x * x));
        return x;
    }}
    {t} z = sqrt(-log((({t})1 - ya) / ({t})2));
    {t} num = ((({t})1.641345311 * z + ({t})3.429567803) * z + ({t})-1.624906493) * z + ({t})-1.970840454;
    {t} dem = (({t})1.637067800 * z + ({t})3.543889200) * z + ({t})1;
    x = num / dem;                       /* erfinv(|y|) */
    {t} q = ({t})1 - ya;                 /* exact */
    x = x + (erfc(x) - q) / (k * exp(-x * x));
    x = x + (erfc(x) - q) / (k * exp(-x * x));
    return y < ({t})0 ? -x : x;
}}
"""


def erfinv(dt):
    """(function name, C source) of erfinv for a float dtype's compute type."""
    if dt == "float64":
        return "dt_erfinv_d", _ERFINV.format(t="double", name="dt_erfinv_d")
    return "dt_erfinv_f", _ERFINV.format(t="float", name="dt_erfinv_f")


def ipow(dt):
    """(function name, C source): a ** b for integers, wrapping; b < 0 gives what
    the exact power truncates to (1 for a == 1, +-1 for a == -1, else 0)."""
    t, w = T.STORAGE[dt], T.WRAP[dt]
    name = f"dt_ipow_{dt}"
    neg = "" if dt == "uint8" else (
        f"    if (b < 0) return (a == 1) ? ({t})1 : (a == -1) ? ((b & 1) ? ({t})-1 : ({t})1) : ({t})0;\n")
    src = (f"inline {t} {name}({t} a, {t} b) {{\n{neg}"
           f"    {w} r = 1, x = ({w})a;\n"
           f"    while (b) {{ if (b & 1) r *= x; x *= x; b >>= 1; }}\n"
           f"    return ({t})r;\n}}\n")
    return name, src
