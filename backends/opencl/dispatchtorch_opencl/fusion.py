"""The fused-kernel hook: one generated OpenCL C kernel per elementwise region.

Each op's expression is the one its own prim kernel uses (kernels/elementwise.py),
so a fused region computes what its prims compute, in registers instead of one
global-memory round trip per op. The loop template (codegen.loop_kernel) walks the
operands' strides as every elementwise kernel does; built programs are cached per
device (and on disk, by the device's program cache).
"""
from __future__ import annotations

import hashlib
import math

from . import cltypes as T
from .codegen import Operand, kernel_name, loop_kernel, loop_launch
from .kernels.elementwise import _COMPARE, _calls_builtin, _cost, binary_expr, unary_expr

_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
          "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
          "floor", "ceil", "round", "trunc", "neg", "abs", "bitwise_not", "relu")
_BINARY = ("add", "sub", "mul", "div", "fmod", "pow", "maximum", "minimum", "atan2",
           "bitwise_and", "bitwise_or", "bitwise_xor", *_COMPARE)


def can_fuse(op, dtype):
    # 16-bit floats round after every prim (a fused kernel would keep float32 between
    # ops); integer division checks for zero on the host first
    if dtype in T.LOWP or (op in ("div", "fmod") and not T.is_float(dtype)):
        return False
    return op in _UNARY or op in _BINARY or op in ("where", "cast")


def _literal(value, dt):
    c = T.COMPUTE[dt]
    if isinstance(value, bool):
        return f"(({c}){int(value)})"
    if isinstance(value, float):
        if math.isnan(value):
            return f"(({c})NAN)"
        if math.isinf(value):
            return f"(({c}){'-' if value < 0 else ''}INFINITY)"
        return f"(({c}){value!r})" if T.is_float(dt) else f"(({c}){int(value)})"
    return f"(({c}){int(value)}L)"


# ops whose expressions also compute on vector types (the math builtins have vector
# overloads: one call per 8 lanes, as the single-op kernels vectorise them)
_VECTOR_SAFE = frozenset({"add", "sub", "mul", "div", "pow", "neg", "exp", "exp2", "expm1", "log",
                          "log2", "log10", "log1p", "sinh", "cosh", "tanh", "asin", "acos",
                          "atan", "asinh", "acosh", "atanh", "erf", "erfc", "atan2", "relu",
                          "maximum", "minimum"})   # (sqrt, floor ...: scalar-only builtins)


def _vector_cast(o):
    """A cast the vector body does with convert_<type>N: into a float type from bool
    (a 0/1 byte), an integer or the other float type (the scalar C casts' results:
    exact, or rounded to nearest as (float)x rounds); a same-type copy is no cast."""
    return o.dtype == o.in_dtype or (o.dtype in ("float32", "float64")
                                     and o.in_dtype not in T.LOWP)


def _vector_width(region):
    """8 (float32) or 4 (float64 anywhere) where every op computes on vector types:
    float32/float64 arithmetic and builtins, and casts into them (a dropout mask's
    bool -> float32 inside a GELU chain)."""
    computed = {o.in_dtype for o in region.ops if o.op != "cast"} | \
        {o.dtype for o in region.ops}
    if not computed <= {"float32", "float64"} or any(d in T.LOWP for d in region.inputs):
        return None
    if not all(o.op in _VECTOR_SAFE or (o.op == "cast" and _vector_cast(o)) for o in region.ops):
        return None
    return 4 if "float64" in computed | set(region.inputs) else 8


def _source(region, width=None):
    """(kernel body(ix), helper source, dtypes used, vector body or None)."""
    ops = region.ops
    helpers = []
    stmts = []
    vstmts = []
    vt = (lambda d: f"{T.COMPUTE[d]}{width}") if width else None

    def arg(a, dt):
        kind, v = a
        if kind == "in":
            return f"i{v}", region.inputs[v]
        if kind == "tmp":
            return f"t{v}", ops[v].dtype
        return _literal(v, dt), dt

    for j, o in enumerate(ops):
        vals = [arg(a, o.in_dtype) for a in o.args]
        if o.op == "cast":
            (x, src), = vals
            expr = T.cast("a", src, o.dtype)
            names = ("a",)
        elif o.op == "where":
            expr, names = "(cond ? a : b)", ("cond", "a", "b")
        elif len(vals) == 1:
            expr, h = unary_expr(o.op, o.in_dtype)
            names = ("a",)
            helpers.append(h)
        else:
            expr, h = binary_expr(o.op, o.in_dtype)
            names = ("a", "b")
            helpers.append(h)
        binds = " ".join(f"const {T.COMPUTE[d]} {n} = {x};" for n, (x, d) in zip(names, vals))
        stmts.append(f"{T.COMPUTE[o.dtype]} t{j}; {{ {binds} t{j} = {expr}; }}")
        if vt:
            vb = " ".join(f"const {vt(d) if not x.startswith('((') else T.COMPUTE[d]} {n} = {x};"
                          for n, (x, d) in zip(names, vals))
            vexpr = expr
            if o.op == "cast" and T.COMPUTE[vals[0][1]] != T.COMPUTE[o.dtype] \
                    and not vals[0][0].startswith("(("):
                vexpr = f"convert_{vt(o.dtype)}(a)"       # (C casts do not apply to vectors)
            vstmts.append(f"{vt(o.dtype)} t{j}; {{ {vb} t{j} = {vexpr}; }}")
    # no a * b + c -> fma contraction across ops: the prims round after every op
    helper_src = "#pragma OPENCL FP_CONTRACT OFF\n" + "".join(dict.fromkeys(h for h in helpers if h))
    vbody = None
    if vt:
        def vbody(lane):
            loads = " ".join(
                f"const {vt(d)} i{i} = ({vt(d)})("
                + ", ".join(T.load(d, f"p_in{i}", lane(f"in{i}", k)) for k in range(width)) + ");"
                for i, d in enumerate(region.inputs))
            stores = " ".join(T.store(ops[j].dtype, f"p_out{q}", lane(f"out{q}", k), f"t{j}.s{k:x}")
                              for q, j in enumerate(region.outputs) for k in range(width))
            return loads + " " + " ".join(vstmts) + " " + stores

    def body(ix):
        loads = " ".join(f"const {T.COMPUTE[d]} i{i} = {T.load(d, f'p_in{i}', ix[f'in{i}'])};"
                         for i, d in enumerate(region.inputs))
        stores = " ".join(T.store(ops[j].dtype, f"p_out{k}", ix[f"out{k}"], f"t{j}")
                          for k, j in enumerate(region.outputs))
        return "{ " + loads + " " + " ".join(stmts) + " " + stores + " }"
    dtypes = tuple(dict.fromkeys([*region.inputs, *(o.dtype for o in ops)]))
    return body, helper_src, dtypes, vbody


def fuse_elementwise(region):
    """kernel(*outs, *ins) running the region as one OpenCL kernel, or None where the
    region would call a math builtin lane by lane (PoCL's scalar exp/erf/tanh measured
    up to 10x slower than the single-op kernels' vector calls)."""
    width = _vector_width(region)
    if width is None and any(_calls_builtin(o.op, o.in_dtype) for o in region.ops):
        return None
    body, helpers, dtypes, vbody = _source(region, width)
    key = region.key()
    tag = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
    out_dts = tuple(region.ops[j].dtype for j in region.outputs)
    operands = [Operand(f"out{k}", d, const=False) for k, d in enumerate(out_dts)] + \
               [Operand(f"in{i}", d) for i, d in enumerate(region.inputs)]
    cost = max(1, sum(_cost(o.op) for o in region.ops) // 2)
    fkey = ("fused", key)
    shown = []

    def make(D, kinds):
        spec = loop_kernel(kernel_name("fused", tag, D, *kinds), operands, kinds, D, body,
                           helpers=helpers, dtypes=dtypes,
                           vector=(width, vbody) if width else None,
                           what=f"fused region ({', '.join(o.op for o in region.ops)})")
        if not shown:
            shown.append(spec.source)
        return spec

    def kernel(*handles):
        out = handles[0]
        if out.size == 0:
            return
        loop_launch(out.dev, fkey, make, out.shape, [(h, h.strides) for h in handles], cost=cost)

    class _Source:
        """The generated C, once built (explain shows it)."""
        def __str__(self):
            return shown[0] if shown else f"(OpenCL kernel fused_{tag}: built at the first call)"

    kernel.source = _Source()
    return kernel


def fuse_epilogue(op, epilogue, dtype):
    """linear + relu, and matmul + threshold_backward (ReLU's backward), as one GEMM
    launch each (dispatchtorch/_compile/epilogue.py): the direct "nt" kernel or the
    packed micro-kernel rectifies each value before its store (kernels/linear.py
    linear_relu), the direct "nn" kernel zeroes it where the ReLU's result is <= 0
    (kernels/matmul_relu_grad.py); other layouts run the two steps."""
    if dtype not in ("float32", "float64"):
        return None
    if (op, epilogue) == ("linear", "relu"):
        from .kernels.linear import linear_relu
        return linear_relu
    if (op, epilogue) == ("matmul", "threshold_backward"):
        from .kernels.matmul_relu_grad import matmul_relu_grad
        return matmul_relu_grad
    return None
