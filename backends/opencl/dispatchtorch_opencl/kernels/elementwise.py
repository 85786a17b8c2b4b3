"""The elementwise prims: one C expression per op and dtype, put into the shared loop
template (one kernel per op, dtypes and layout class), plus copies and fills.

Expressions read the operands `a`, `b` (and `cond` for where) in their compute
type. Integer arithmetic goes through unsigned types so wrapping is defined.
"""
from __future__ import annotations

import re

import numpy as np

from .. import cltypes as T, transfers
from ..codegen import Operand, kernel_name, loop_kernel, loop_launch
from . import clerf, clmath

_BUILTIN = {n: n for n in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                           "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                           "acosh", "atanh", "erf", "erfc")}
_INSTR = {"sqrt": "SQRT", "floor": "FLOOR", "ceil": "CEIL", "round": "RINT", "trunc": "TRUNC"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}


def unary_expr(op, dt):
    """(C expression in `a`, helper source) for a unary prim on dtype dt."""
    c, w = T.COMPUTE[dt], T.WRAP.get(dt)
    if op == "tanh":
        # past the threshold tanh is +-1 after rounding; PoCL's vector tanh returns
        # 1 - ulp there, which would make 1 + tanh(x) (gelu, ...) nonzero
        t = "20" if dt == "float64" else "10"
        return f"(a > ({c}){t} ? ({c})1 : a < -({c}){t} ? ({c})-1 : tanh(a))", ""
    if op == "erf" and T.is_float(dt):       # PoCL's builtin: ~6x its exp (clerf.py)
        return clerf.erf(c)
    if op in _BUILTIN:
        return f"{op}(a)", ""
    if op in _INSTR:
        return f"DT_{_INSTR[op]}{'' if dt == 'float64' else 'F'}(a)", ""
    if op == "erfinv":
        name, src = clmath.erfinv(dt)
        return f"{name}(a)", src
    if op == "neg":
        return ("-a", "") if T.is_float(dt) else (f"({c})(0u - ({w})a)", "")
    if op == "abs":
        if dt == "float64":
            return "as_double(as_ulong(a) & 0x7fffffffffffffffUL)", ""
        if T.is_float(dt):
            return "as_float(as_uint(a) & 0x7fffffffu)", ""
        if dt in ("uint8", "bool"):
            return "a", ""
        return f"(a < 0 ? ({c})(0u - ({w})a) : a)", ""
    if op == "bitwise_not":
        return ("(uchar)(a ^ 1)", "") if dt == "bool" else (f"({c})(~a)", "")
    # a fused composite: one pass instead of its decomposition's three kernels
    if op == "relu":           # NaN stays NaN and -0.0 stays -0.0, as PyTorch's relu
        return f"(a < ({c})0 ? ({c})0 : a)", ""
    raise KeyError(op)


def binary_expr(op, dt):
    """(C expression in `a`, `b`, helper source) for a binary prim on dtype dt."""
    c, w = T.COMPUTE[dt], T.WRAP.get(dt)
    fl = T.is_float(dt)
    signed = dt in ("int8", "int16", "int32", "int64")
    if op in _COMPARE:
        return f"(uchar)(a {_COMPARE[op]} b)", ""
    if op in _BITWISE:
        return f"({c})(a {_BITWISE[op]} b)", ""
    if op in ("add", "sub", "mul"):
        sym = {"add": "+", "sub": "-", "mul": "*"}[op]
        if fl:
            return f"(a {sym} b)", ""
        if dt == "bool":
            return ("(uchar)(a | b)" if op == "add" else "(uchar)(a & b)"), ""
        return f"({c})(({w})a {sym} ({w})b)", ""
    if op == "div":
        if fl:
            return "(a / b)", ""
        if signed:   # b == 0 was refused before launch; -1 would trap on INT_MIN
            return f"(b == 0 ? ({c})0 : b == -1 ? ({c})(0u - ({w})a) : ({c})(a / b))", ""
        return f"(b == 0 ? ({c})0 : ({c})(a / b))", ""
    if op == "fmod":
        if fl:
            return "fmod(a, b)", ""
        if signed:
            return f"((b == 0 || b == -1) ? ({c})0 : ({c})(a % b))", ""
        return f"(b == 0 ? ({c})0 : ({c})(a % b))", ""
    if op == "pow":
        if fl:
            return "pow(a, b)", ""
        name, src = clmath.ipow(dt)
        return f"{name}(a, b)", src
    if op == "maximum":
        return ("((a > b || a != a) ? a : b)" if fl else "(a > b ? a : b)"), ""
    if op == "minimum":
        return ("((a < b || a != a) ? a : b)" if fl else "(a < b ? a : b)"), ""
    if op == "atan2":
        return "atan2(a, b)", ""
    if op in ("bitwise_left_shift", "bitwise_right_shift"):
        bits = T.BITS[dt]
        if op == "bitwise_left_shift":
            e = f"((({w})b < {bits}u) ? ({c})(({w})a << b) : ({c})0)"
        else:
            e = f"((({w})b < {bits}u) ? ({c})(a >> b) : (a < 0 ? ({c})-1 : ({c})0))"
        return (f"(uchar)({e} != 0)" if dt == "bool" else e), ""
    if op == "gcd":     # PyTorch's Euclid on |a|, |b| (|INT_MIN| wraps: the gcd may be < 0)
        name = f"gcd_{dt}"
        neg = (f"a = a < 0 ? ({c})(0u - ({w})a) : a; b = b < 0 ? ({c})(0u - ({w})b) : b; "
               if signed else "")
        return f"{name}(a, b)", (
            f"static {c} {name}({c} a, {c} b) {{ {neg}"
            f"while (a != 0) {{ {c} t = a; a = b % a; b = t; }} return b; }}\n")
    raise KeyError(op)


# -- kernels ----------------------------------------------------------------------------

VECTOR_WIDTH = 8


def _spec(op, out_dt, in_dts, names, expr, helpers):
    def make(D, kinds):
        ops = [Operand("out", out_dt, const=False)] + [Operand(n, d) for n, d in zip(names, in_dts)]

        def body(ix):
            loads = " ".join(f"{T.COMPUTE[d]} {n} = {T.load(d, 'p_' + n, ix[n])};"
                             for n, d in zip(names, in_dts))
            return "{ " + loads + " " + T.store(out_dt, "p_out", ix["out"], expr) + " }"
        vector = None
        if _calls_builtin(op, in_dts[0]):
            width = VECTOR_WIDTH // 2 if "float64" in in_dts else VECTOR_WIDTH   # 256-bit vectors
            guard = "1.0e6f" if op in ("sin", "cos", "tan") and T.COMPUTE[in_dts[0]] == "float" else None
            vector = (width, _vector_body(out_dt, in_dts, names, expr, width, guard))
        dts = (out_dt, *in_dts)
        return loop_kernel(kernel_name("ew", op, *dts, D, *kinds), ops, kinds, D, body,
                           helpers=helpers, dtypes=dts, vector=vector,
                           what=f"{op} ({', '.join(in_dts)} -> {out_dt})")
    return make


def _calls_builtin(op, dt):
    """Whether the op's expression calls an OpenCL math builtin (worth vectorising)."""
    return op in _BUILTIN or op == "atan2" or (op in ("fmod", "pow") and T.is_float(dt))


def _vector_body(out_dt, in_dts, names, expr, w, guard=None):
    """The math builtins have vector overloads (PoCL: SLEEF's vector code), so w
    elements are gathered into a vector, computed with one call, and stored lane by
    lane; plain arithmetic needs none of this (the compiler vectorises it)."""

    def vbody(lane):
        loads = " ".join(
            f"{T.COMPUTE[d]}{w} {n} = ({T.COMPUTE[d]}{w})("
            + ", ".join(T.load(d, "p_" + n, lane(n, k)) for k in range(w)) + ");"
            for n, d in zip(names, in_dts))
        stores = " ".join(T.store(out_dt, "p_out", lane("out", k), f"r_.s{k:x}") for k in range(w))
        vt = f"{T.COMPUTE[out_dt]}{w}"
        compute = f"{vt} r_ = {expr};"
        if guard is not None:
            # a lane past the guard sends the whole vector down a path that spoils the
            # small lanes (PoCL's float sin/cos/tan: sin(-1e-7) next to 1e10 gave
            # -0.013), so such vectors are computed lane by lane
            far = " || ".join(f"a.s{k:x} > {guard} || a.s{k:x} < -{guard}" for k in range(w))
            lanes = ", ".join(re.sub(r"\ba\b", f"a.s{k:x}", expr) for k in range(w))
            compute = f"{vt} r_; if ({far}) r_ = ({vt})({lanes}); else r_ = {expr};"
        return f"{loads} {compute} {stores}"
    return vbody


def _cost(op):
    return 1 if op in ("add", "sub", "mul", "neg", "abs", "where", "maximum", "minimum") \
        or op in _COMPARE or op in _BITWISE else 8


_MAKERS = {}


def _maker(fkey, build):
    make = _MAKERS.get(fkey)
    if make is None:
        make = _MAKERS[fkey] = build()
    return make


def _make_unary(op):
    cost = _cost(op)

    def build(out_dt, dt):
        return _spec(op, out_dt, (dt,), ("a",), *unary_expr(op, dt))

    def kernel(out, a):
        if out.size == 0:
            return
        fkey = ("ew", op, out.dtype, a.dtype)
        make = _MAKERS.get(fkey) or _maker(fkey, lambda: build(out.dtype, a.dtype))
        loop_launch(out.dev, fkey, make, out.shape, [(out, out.strides), (a, a.strides)],
                    cost=cost)
    kernel.__name__ = op
    return kernel


def _make_binary(op):
    cost = _cost(op)
    checks_zero = op in ("div", "fmod")

    def build(out_dt, da, db):
        return _spec(op, out_dt, (da, db), ("a", "b"), *binary_expr(op, da))

    def kernel(out, a, b):
        if out.size == 0:
            return
        if checks_zero and not T.is_float(a.dtype) and any_zero(b):
            what = "division" if op == "div" else "modulo"
            raise ZeroDivisionError(f"integer {what} by zero")
        fkey = ("ew", op, out.dtype, a.dtype)
        make = _MAKERS.get(fkey) or _maker(fkey, lambda: build(out.dtype, a.dtype, b.dtype))
        loop_launch(out.dev, fkey, make, out.shape,
                    [(out, out.strides), (a, a.strides), (b, b.strides)], cost=cost)
    kernel.__name__ = op
    return kernel


def where(out, cond, a, b):
    if out.size == 0:
        return
    fkey = ("ew", "where", out.dtype, a.dtype)
    make = _MAKERS.get(fkey) or _maker(fkey, lambda: _spec(
        "where", out.dtype, (cond.dtype, a.dtype, b.dtype), ("cond", "a", "b"), "(cond ? a : b)", ""))
    loop_launch(out.dev, fkey, make, out.shape,
                [(out, out.strides), (cond, cond.strides), (a, a.strides), (b, b.strides)])


def any_zero(h):
    """Whether an integer handle holds a zero (one small read back)."""
    dev = h.dev
    flag = dev.cl.Buffer(dev.ctx, dev.cl.mem_flags.READ_WRITE | dev.cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=np.zeros(1, np.int32))

    def make(D, kinds):
        return loop_kernel(kernel_name("anyzero", h.dtype, D, *kinds), [Operand("x", h.dtype)],
                           kinds, D, lambda ix: f"if (p_x[{ix['x']}] == 0) flag[0] = 1;",
                           params=[("__global int*", "flag", None)], dtypes=(h.dtype,),
                           what=f"zero check ({h.dtype})")
    with dev.aside(h.buf):                       # beside the queue's kernels
        loop_launch(dev, ("anyzero", h.dtype), make, h.shape, [(h, h.strides)], [flag])
    host = np.zeros(1, np.int32)
    transfers.read(dev, host, flag)
    return bool(host[0])


# -- copies and fills (memory methods) ---------------------------------------------------

def copy_kernel(dst, src):
    """dst[...] = src with C casts, any layouts (the caller resolved overlap)."""
    dd, sd = dst.dtype, src.dtype

    def make(D, kinds):
        if dd == sd:
            def body(ix):
                return f"p_d[{ix['d']}] = p_s[{ix['s']}];"
        else:
            def body(ix):
                return T.store_cast(dd, "p_d", ix["d"], T.load(sd, "p_s", ix["s"]), sd)
        return loop_kernel(kernel_name("copy", dd, sd, D, *kinds),
                           [Operand("d", dd, const=False), Operand("s", sd)], kinds, D, body,
                           dtypes=(dd, sd),
                           what=f"copy_ ({sd} -> {dd})")
    loop_launch(dst.dev, ("copy", dd, sd), make, dst.shape,
                [(dst, dst.strides), (src, src.strides)])


def fill_kernel(dst, bits):
    """Every element of a strided handle := the stored bit pattern `bits` (a numpy scalar)."""
    dt = dst.dtype
    ctype = T.STORAGE[dt]

    def make(D, kinds):
        return loop_kernel(kernel_name("fill", dt, D, *kinds), [Operand("d", dt, const=False)],
                           kinds, D, lambda ix: f"p_d[{ix['d']}] = v;",
                           params=[(ctype, "v", bits.dtype.type)], dtypes=(dt,),
                           what=f"fill_ ({dt})")
    loop_launch(dst.dev, ("fill", dt), make, dst.shape, [(dst, dst.strides)], [bits])


UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
         "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
         "erfinv", "floor", "ceil", "round", "trunc", "neg", "abs", "bitwise_not")
BINARY = ("add", "sub", "mul", "div", "fmod", "pow", "maximum", "minimum", "atan2",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "gcd",
          *_COMPARE)

# composites with a kernel of their own, measured faster than their decompositions.
# (Not sigmoid: for float16/bfloat16 the frontend differentiates the decomposition in
# float32, while a kernel of the op's own would have its rule run in 16 bits.)
FUSED = ("relu",)

KERNELS = {**{op: _make_unary(op) for op in UNARY + FUSED},
           **{op: _make_binary(op) for op in BINARY}, "where": where}
