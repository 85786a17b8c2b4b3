"""Ulp budgets: how many units in the last place of the output dtype a backend's
elementwise result may be from the CPU reference's, per case and dtype.

Only cases listed here are compared by ulp distance (with the sign of zero, and no
absolute floor); every other case keeps its rtol/atol tolerance (sums, products and
matmul, whose error scales with the terms, not with the result).

Why these numbers (docs/conformance.md has the table):
- EXACT: IEEE 754 makes +, -, *, /, sqrt, fmod and rounding correctly rounded, and
  min/max, abs, neg, selects and gathers move values without arithmetic. float16 and
  bfloat16 computed in float32 and rounded once are correctly rounded too (float32
  has more than 2p+2 bits), so every dtype gets 0.
- The transcendental functions: the OpenCL 1.2 full profile's ulp limit for the
  function (what a conforming device's libm promises), plus 4 for the reference
  (numpy's float32 functions are within 4 ulp, its float64 ones within 1), so that
  a correct device never fails; half precision computes in float32 and rounds once,
  so it gets 2 (the float32 result may sit near a rounding boundary of half).
The budgets are loose against real implementations and tight against the bugs they
exist to catch: a flushed subnormal is up to 2**23 ulp away, a naive expm1 near 0
millions, a result in the wrong binade 2**23.
"""
from __future__ import annotations

EXACT = ("add", "sub", "mul", "div", "div_trunc", "div_floor", "fmod", "neg", "abs",
         "floor", "ceil", "trunc", "round", "sqrt", "maximum", "minimum", "where",
         "masked_fill", "gather", "index_select", "take", "getitem_advanced", "amax", "amin",
         "cummax", "cummin", "sort")

# OpenCL 1.2 section 7.4 ulp limits (single precision; double precision is the same or
# tighter), before adding the reference's share
OPENCL_ULP = {"exp": 3, "exp2": 3, "expm1": 3, "log": 3, "log2": 3, "log10": 3, "log1p": 2,
              "sin": 4, "cos": 4, "tan": 5, "asin": 4, "acos": 4, "atan": 5, "sinh": 4,
              "cosh": 4, "tanh": 5, "asinh": 4, "acosh": 4, "atanh": 5, "erf": 16, "erfc": 16,
              "pow": 16, "atan2": 6}
REFERENCE_ULP = 4
HALF_ULP = 2

BUDGETS: dict[str, dict[str, float]] = {}
for _name in EXACT:
    BUDGETS[_name] = {"float16": 0, "bfloat16": 0, "float32": 0, "float64": 0}
for _name, _u in OPENCL_ULP.items():
    BUDGETS[_name] = {"float16": HALF_ULP, "bfloat16": HALF_ULP, "float32": _u + REFERENCE_ULP,
                      "float64": _u + REFERENCE_ULP}
# erfinv has no OpenCL builtin: backends build it from a rational approximation and
# a Newton step, as the reference does; 16 ulp like erf
BUDGETS["erfinv"] = dict(BUDGETS["erf"])


def budget_for(case, sample=None):
    """{dtype: ulps} for the case, or None (tolerance-based). A sample that widens
    its tolerance (Tol) keeps the tolerance comparison."""
    if sample is not None and sample.tol is not None:
        return None
    return BUDGETS.get(case.name)
