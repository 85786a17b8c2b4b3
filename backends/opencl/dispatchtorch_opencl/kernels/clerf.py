"""erf as polynomials and one exp, in OpenCL C that computes on scalars and vectors.

PoCL's erf builtin costs ~6x its exp in float32 (2.2 ms on 512K floats, the largest
non-GEMM kernel of the tiny transformer's GELU) and 8-12x in float64. These
expressions are plain arithmetic, fmin/fabs/copysign and one exp, so the same text
computes a float or a float8 (a vector `?:` selects lanes; both branches are then
evaluated, which costs less than the builtin's scalar loop):

- |x| < 1: erf(x) = x * S(x*x);
- 1 <= |x|: erf(x) = sign(x) * (1 - exp(-y*y) * G(y)), y = min(|x|, cap), G ~ erfcx.

float32 (also the compute type of float16/bfloat16) uses the CPU backend's fit
(dispatchtorch_cpu/erf32.py: S of degree 6, G of degree 7 in t = 1/(1 + 0.3275911 y),
cap 4; within 2.7 ulp of the float64 erf). float64 uses fits of our own: least
squares at 4000 Chebyshev nodes against mpmath's erf and erfcx at 40 digits, refined
on the residual: S of degree 11 in z = x*x on [0, 1], and G of degree 22 in
s = (y - 3.5) / 2.5 on [1, 6], weighted by erfc/erf (G's error reaches erf in that
proportion); cap 6, where 1 - erfc rounds to 1. Measured on PoCL at 2.6e5 points
(normal, uniform on [-7, 7], tiny): float64 within 2.0 ulp of mpmath's erf, float32
within 2.4 ulp of the float64 erf. NaN stays NaN (it takes the |x| < 1 branch), +-inf gives
+-1, -0.0 gives -0.0.
"""
from __future__ import annotations

_S32 = ("7.933494e-05", "-0.00080348464", "0.0051912186", "-0.0268554", "0.11283626",
        "-0.3761263", "1.1283792")
_G32 = ("-0.17759733", "0.9994311", "-1.2146757", "1.2575676", "-0.37383503",
        "0.35026437", "0.1568963", "0.0020323587")
_S64 = ("-7.722926981082995e-10", "1.3679801913763045e-08", "-1.619889816863553e-07",
        "1.6446136666845908e-06", "-1.4924629671299828e-05", "0.00012055289192862343",
        "-0.0008548325781608855", "0.005223977603093557", "-0.026866170642773107",
        "0.1128379167094265", "-0.3761263890318353", "1.1283791670955126")
_G64 = ("4.418479894045627e-06", "1.3976177519851122e-05", "1.512955399115575e-05",
        "-4.887836979525064e-06", "-7.311447267684057e-06", "-1.8250292376828152e-06",
        "2.0990444259436812e-05", "-3.527737412229415e-05", "5.369969273539372e-05",
        "-0.00010656536443883991", "0.00022584188482900304", "-0.0004411591337172919",
        "0.0008218872059116199", "-0.0015223801189258835", "0.002813177254298894",
        "-0.005024012942593381", "0.008833965194242021", "-0.01518268643163688",
        "0.0254954779939268", "-0.04176679943073326", "0.06663208230187796",
        "-0.10330894449916043", "0.15529365561308267")


def _horner(coeffs, v, suffix):
    """C text of the polynomial (highest power first) in the macro argument v."""
    text = coeffs[0] + suffix
    for c in coeffs[1:]:
        text = f"({text}) * ({v}) + {c}{suffix}"
    return f"({text})"


def _defines(name, f, cap, S, G, far_var):
    y = f"fmin(fabs(a), {cap}{f})"
    return (f"#define {name}_Y(a) {y}\n"
            f"#define {name}_S(z) {_horner(S, 'z', f)}\n"
            f"#define {name}_G(v) {_horner(G, 'v', f)}\n"
            f"#define {name}_FAR(a) copysign(1.0{f} - exp(-{name}_Y(a) * {name}_Y(a)) * "
            f"{name}_G({far_var.format(y=f'{name}_Y(a)')}), (a))\n"
            f"#define {name}(a) (fabs(a) >= 1.0{f} ? {name}_FAR(a) : (a) * {name}_S((a) * (a)))\n")


_F32 = _defines("DT_ERF_F", "f", "4.0", _S32, _G32, "1.0f / (1.0f + 0.3275911f * {y})")
_F64 = _defines("DT_ERF_D", "", "6.0", _S64, _G64, "({y} - 3.5) * 0.4")


def erf(compute_type):
    """(C expression of erf(a), its #defines) for a compute type ('float' or 'double');
    `a` may be a scalar or a vector of that type."""
    if compute_type == "double":
        return "DT_ERF_D(a)", _F64
    return "DT_ERF_F(a)", _F32
