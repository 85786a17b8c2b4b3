"""The ONNX form of each prim and of the composites a capture keeps whole.

Each entry is `fn(b, call) -> output name(s)`: `b` is the Builder, `call` one captured
node with its inputs as ONNX names (`call.ins`, None for an absent optional tensor,
the Python value for a scalar argument), their shapes and dtypes, its params and its
outputs' shapes and dtypes. An op missing from `OPS` has no ONNX form; the exporter
reports it with the model line that called it.
"""
from __future__ import annotations

import math

import numpy as np

from ._builder import UnsupportedOpError

OPS: dict = {}


def onnx_op(*names):
    def register(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return register


def _same_dtype(b, call, dt=None):
    """The tensor inputs cast to one dtype (the prims' inputs share one)."""
    dt = dt or call.out_dtypes[0]
    return [b.cast(x, d, dt) if d is not None else x for x, d in zip(call.ins, call.in_dtypes)]


# -- elementwise --------------------------------------------------------------------------------

_UNARY = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan",
          "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
          "tanh": "Tanh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh", "erf": "Erf",
          "floor": "Floor", "ceil": "Ceil", "round": "Round", "neg": "Neg", "abs": "Abs",
          "relu": "Relu", "sigmoid": "Sigmoid", "reciprocal": "Reciprocal", "sign": "Sign",
          "isnan": "IsNaN"}


def _unary(onnx_name):
    return lambda b, call: b.op(onnx_name, _same_dtype(b, call, call.in_dtypes[0]))


for _name, _onnx in _UNARY.items():
    OPS[_name] = _unary(_onnx)


def _scalar(b, value, dt):
    return b.const(np.asarray(value), dt)


@onnx_op("exp2")
def _exp2(b, call):
    return b.op("Pow", [_scalar(b, 2.0, call.out_dtypes[0]), call.ins[0]])


@onnx_op("expm1")
def _expm1(b, call):
    return b.op("Sub", [b.op("Exp", call.ins), _scalar(b, 1.0, call.out_dtypes[0])])


@onnx_op("log1p")
def _log1p(b, call):
    return b.op("Log", [b.op("Add", [call.ins[0], _scalar(b, 1.0, call.out_dtypes[0])])])


@onnx_op("log2", "log10")
def _log_base(b, call):
    base = 2.0 if call.op == "log2" else 10.0
    return b.op("Div", [b.op("Log", call.ins), _scalar(b, math.log(base), call.out_dtypes[0])])


@onnx_op("erfc")
def _erfc(b, call):
    return b.op("Sub", [_scalar(b, 1.0, call.out_dtypes[0]), b.op("Erf", call.ins)])


@onnx_op("trunc")
def _trunc(b, call):
    x = call.ins[0]
    return b.op("Mul", [b.op("Sign", [x]), b.op("Floor", [b.op("Abs", [x])])])


@onnx_op("rsqrt")
def _rsqrt(b, call):
    return b.op("Reciprocal", [b.op("Sqrt", call.ins)])


@onnx_op("bitwise_not", "logical_not")
def _not(b, call):
    if call.in_dtypes[0] == "bool" or call.op == "logical_not":
        return b.op("Not", [b.cast(call.ins[0], call.in_dtypes[0], "bool")])
    return _int_bitwise(b, "BitwiseNot", call.ins)


def _int_bitwise(b, op_type, ins):
    if b.opset < 18:
        raise NotImplementedError(f"integer {op_type} needs opset_version 18 or newer "
                                  f"(asked for {b.opset})")
    return b.op(op_type, ins)


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min"}
_BOOL_BINARY = {"add": "Or", "mul": "And", "maximum": "Or", "minimum": "And",
                "bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor"}
_INT_BITWISE = {"bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
                "bitwise_xor": "BitwiseXor"}


def _binary(name):
    def fn(b, call):
        dt = call.out_dtypes[0]
        ins = _same_dtype(b, call)
        if dt == "bool" and name in _BOOL_BINARY:
            return b.op(_BOOL_BINARY[name], ins)
        if name in _INT_BITWISE:
            return _int_bitwise(b, _INT_BITWISE[name], ins)
        return b.op(_BINARY[name], ins)
    return fn


for _name in (*_BINARY, *_INT_BITWISE):
    OPS[_name] = _binary(_name)


@onnx_op("fmod")
def _fmod(b, call):
    return b.op("Mod", _same_dtype(b, call), fmod=1)


@onnx_op("atan2")
def _atan2(b, call):
    y, x = _same_dtype(b, call)
    dt = call.out_dtypes[0]
    base = b.op("Atan", [b.op("Div", [y, x])])
    zero = _scalar(b, 0.0, dt)
    pi = _scalar(b, math.pi, dt)
    # x < 0: shift by +pi (y >= 0) or -pi (y < 0)
    shift = b.op("Where", [b.op("Less", [y, zero]), b.op("Neg", [pi]), pi])
    out = b.op("Where", [b.op("Less", [x, zero]), b.op("Add", [base, shift]), base])
    both_zero = b.op("And", [b.op("Equal", [x, zero]), b.op("Equal", [y, zero])])
    return b.op("Where", [both_zero, zero, out])


_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
            "ge": "GreaterOrEqual"}


def _compare(name):
    def fn(b, call):
        dts = [d for d in call.in_dtypes if d is not None]
        dt = dts[0] if all(d == dts[0] for d in dts) else "float64"
        ins = _same_dtype(b, call, dt)
        if name == "ne":
            return b.op("Not", [b.op("Equal", ins)])
        return b.op(_COMPARE[name], ins)
    return fn


for _name in (*_COMPARE, "ne"):
    OPS[_name] = _compare(_name)


@onnx_op("where")
def _where(b, call):
    cond, x, y = call.ins
    dt = call.out_dtypes[0]
    return b.op("Where", [b.cast(cond, call.in_dtypes[0], "bool"),
                          b.cast(x, call.in_dtypes[1], dt), b.cast(y, call.in_dtypes[2], dt)])


@onnx_op("clamp")
def _clamp(b, call):
    dt = call.out_dtypes[0]
    lo, hi = (call.params.get("min"), call.params.get("max")) if len(call.ins) == 1 else \
        call.ins[1:3]
    lo = "" if lo is None else (lo if isinstance(lo, str) else _scalar(b, lo, dt))
    hi = "" if hi is None else (hi if isinstance(hi, str) else _scalar(b, hi, dt))
    return b.op("Clip", [call.ins[0], lo, hi])


# -- reductions and scans -------------------------------------------------------------------------

_REDUCE = {"sum": "ReduceSum", "prod": "ReduceProd", "amax": "ReduceMax", "amin": "ReduceMin",
           "mean": "ReduceMean"}


def _reduce(name):
    def fn(b, call):
        x = b.cast(call.ins[0], call.in_dtypes[0], call.out_dtypes[0])
        dims = call.params.get("dims", call.params.get("dim"))
        if dims is None:
            dims = range(len(call.in_shapes[0]))
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if not dims:
            return b.op("Identity", [x])
        return b.reduce(_REDUCE[name], x, dims, call.params.get("keepdim", False))
    return fn


for _name in _REDUCE:
    OPS[_name] = _reduce(_name)


@onnx_op("argmax", "argmin")
def _arg_reduce(b, call):
    return b.op("ArgMax" if call.op == "argmax" else "ArgMin", [call.ins[0]],
                axis=int(call.params["dim"]), keepdims=int(call.params.get("keepdim", False)),
                select_last_index=0)


@onnx_op("cumsum")
def _cumsum(b, call):
    x = b.cast(call.ins[0], call.in_dtypes[0], call.out_dtypes[0])
    return b.op("CumSum", [x, b.const(np.asarray(call.params["dim"], np.int64))])


# -- linear algebra, indexing ---------------------------------------------------------------------

@onnx_op("matmul", "mm", "bmm")
def _matmul(b, call):
    return b.op("MatMul", _same_dtype(b, call))


def transposed_weight(b, w):
    """w.T: folded into a new initializer when w is a constant (the weights)."""
    arr = b.constant_value(w)
    if arr is not None and b.fold:
        return b.initializer(b.fresh(w + ".T"), arr.T)
    return b.op("Transpose", [w], perm=[1, 0])


@onnx_op("linear")
def _linear(b, call):
    x, w, bias = call.ins
    if len(call.in_shapes[0]) == 2 and bias is not None:
        return b.op("Gemm", [x, w, bias], transB=1)
    y = b.op("MatMul", [x, transposed_weight(b, w)])
    return y if bias is None else b.op("Add", [y, bias])


@onnx_op("gather")
def _gather(b, call):
    return b.op("GatherElements", call.ins, axis=int(call.params["dim"]))


@onnx_op("index_select")
def _index_select(b, call):
    return b.op("Gather", call.ins, axis=int(call.params["dim"]))


@onnx_op("embedding")
def _embedding(b, call):
    weight, indices = call.ins
    return b.op("Gather", [weight, indices], axis=0)


@onnx_op("cat")
def _cat(b, call):
    return b.op("Concat", [x for x in call.ins if x is not None], axis=int(call.params["dim"]))


# -- nn composites ------------------------------------------------------------------------------

@onnx_op("softmax", "log_softmax")
def _softmax(b, call):
    return b.op("Softmax" if call.op == "softmax" else "LogSoftmax", [call.ins[0]],
                axis=int(call.params["dim"]))


@onnx_op("gelu")
def _gelu(b, call):
    x = call.ins[0]
    approximate = call.params.get("approximate", "none")
    if b.opset >= 20:
        return b.op("Gelu", [x], approximate=approximate)
    dt = call.out_dtypes[0]
    half = b.op("Mul", [x, _scalar(b, 0.5, dt)])
    if approximate == "tanh":
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Mul", [b.op("Add", [x, b.op("Mul", [cube, _scalar(b, 0.044715, dt)])]),
                             _scalar(b, math.sqrt(2.0 / math.pi), dt)])
        return b.op("Mul", [half, b.op("Add", [_scalar(b, 1.0, dt), b.op("Tanh", [inner])])])
    erf = b.op("Erf", [b.op("Mul", [x, _scalar(b, math.sqrt(0.5), dt)])])
    return b.op("Mul", [half, b.op("Add", [_scalar(b, 1.0, dt), erf])])


@onnx_op("silu")
def _silu(b, call):
    x = call.ins[0]
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


@onnx_op("layer_norm")
def _layer_norm(b, call):
    x, weight, bias = call.ins
    shape = tuple(call.params["normalized_shape"])
    dt = call.in_dtypes[0]
    if weight is None:
        weight = b.const(np.ones(shape), dt)
    ins = [x, weight] + ([bias] if bias is not None else [])
    return b.op("LayerNormalization", ins, axis=-len(shape), epsilon=float(call.params["eps"]))


def _normalize(b, x, axes, eps, dt):
    mean = b.reduce("ReduceMean", x, axes, True)
    xc = b.op("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.op("Mul", [xc, xc]), axes, True)
    return b.op("Div", [xc, b.op("Sqrt", [b.op("Add", [var, _scalar(b, eps, dt)])])])


@onnx_op("rms_norm")
def _rms_norm(b, call):
    x, weight = call.ins
    dt = call.in_dtypes[0]
    rank = len(call.in_shapes[0])
    axes = range(rank - len(call.params["normalized_shape"]), rank)
    ms = b.reduce("ReduceMean", b.op("Mul", [x, x]), axes, True)
    y = b.op("Div", [x, b.op("Sqrt", [b.op("Add", [ms, _scalar(b, call.params["eps"], dt)])])])
    return y if weight is None else b.op("Mul", [y, weight])


@onnx_op("group_norm")
def _group_norm(b, call):
    x, weight, bias = call.ins
    dt = call.in_dtypes[0]
    shape = call.in_shapes[0]
    g = int(call.params["num_groups"])
    grouped = b.op("Reshape", [x, b.int64s([0, g, -1])])
    y = b.op("Reshape", [_normalize(b, grouped, [2], call.params["eps"], dt),
                         b.op("Shape", [x])])
    per_channel = [-1] + [1] * (len(shape) - 2)
    if weight is not None:
        y = b.op("Mul", [y, b.op("Reshape", [weight, b.int64s(per_channel)])])
    if bias is not None:
        y = b.op("Add", [y, b.op("Reshape", [bias, b.int64s(per_channel)])])
    return y


def _pads(padding):
    padding = tuple(int(p) for p in padding)
    return list(padding) + list(padding)


@onnx_op("conv2d")
def _conv2d(b, call):
    x, w, bias = call.ins
    p = call.params
    ins = [x, w] + ([bias] if bias is not None else [])
    return b.op("Conv", ins, strides=list(p["stride"]), pads=_pads(p["padding"]),
                dilations=list(p["dilation"]), group=int(p["groups"]),
                kernel_shape=list(call.in_shapes[1][2:]))


@onnx_op("conv_transpose2d")
def _conv_transpose2d(b, call):
    x, w, bias = call.ins
    p = call.params
    ins = [x, w] + ([bias] if bias is not None else [])
    return b.op("ConvTranspose", ins, strides=list(p["stride"]), pads=_pads(p["padding"]),
                output_padding=list(p["output_padding"]), dilations=list(p["dilation"]),
                group=int(p["groups"]), kernel_shape=list(call.in_shapes[1][2:]))


@onnx_op("max_pool2d")
def _max_pool2d(b, call):
    p = call.params
    return b.op("MaxPool", [call.ins[0]], kernel_shape=list(p["kernel_size"]),
                strides=list(p["stride"]), pads=_pads(p["padding"]),
                dilations=list(p.get("dilation", (1, 1))), ceil_mode=int(p.get("ceil_mode", 0)))


@onnx_op("avg_pool2d")
def _avg_pool2d(b, call):
    p = call.params
    if p.get("divisor_override"):
        raise NotImplementedError("avg_pool2d with divisor_override has no ONNX form")
    return b.op("AveragePool", [call.ins[0]], kernel_shape=list(p["kernel_size"]),
                strides=list(p["stride"]), pads=_pads(p["padding"]),
                ceil_mode=int(p.get("ceil_mode", 0)),
                count_include_pad=int(p.get("count_include_pad", True)))


@onnx_op("scaled_dot_product_attention")
def _sdpa(b, call):
    q, k, v, mask = call.ins
    p = call.params
    dt = call.in_dtypes[0]
    qs, ks = call.in_shapes[0], call.in_shapes[1]
    rank = len(ks)
    scale = p.get("scale")
    if scale is None:
        scale = 1.0 / math.sqrt(int(qs[-1]))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    s = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k], perm=perm)]),
                     _scalar(b, scale, dt)])
    neg_inf = _scalar(b, -np.inf, dt)
    if p.get("is_causal"):
        L, S = int(qs[-2]), int(ks[-2])
        allowed = np.tril(np.ones((L, S), dtype=bool))
        s = b.op("Where", [b.const(allowed), s, neg_inf])
    if mask is not None:
        if call.in_dtypes[3] == "bool":
            s = b.op("Where", [mask, s, neg_inf])
        else:
            s = b.op("Add", [s, b.cast(mask, call.in_dtypes[3], dt)])
    return b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])


def _no_training(what):
    def fn(b, call):
        raise UnsupportedOpError(f"export: {what} has no ONNX form in inference (called at "
                                 f"{call.source or 'an unknown line'}); call model.eval() "
                                 "before exporting")
    return fn


OPS["batch_norm"] = _no_training("batch_norm with batch statistics (training mode)")
OPS["random"] = OPS["dropout"] = _no_training("dropout in training mode (a random mask)")


@onnx_op("masked_fill")
def _masked_fill(b, call):
    x, mask, value = call.ins
    dt = call.out_dtypes[0]
    if call.in_dtypes[2] is None:
        value = _scalar(b, value, dt)
    else:
        value = b.cast(value, call.in_dtypes[2], dt)
    return b.op("Where", [b.cast(mask, call.in_dtypes[1], "bool"), value, x])


# -- the remaining prims: scans, sort, searchsorted, shifts, scatter, erfinv --------------------

def _static(d, what):
    if not isinstance(d, int):
        raise NotImplementedError(f"{what} along a dynamic axis")
    return d


def _triangle(b, call, x, dtype, fill):
    """x broadcast to (..., n, n, ...) at dims (d, d + 1), with x[..., j, ...] where
    j <= i and `fill` elsewhere: a running reduction becomes a plain one over d + 1
    (the scan's dim must be static)."""
    shape = call.in_shapes[0]
    d = int(call.params["dim"]) % max(len(shape), 1)
    n = _static(shape[d] if shape else 1, f"{call.op}")
    lower = np.tril(np.ones((n, n), dtype=bool)).reshape((n, n) + (1,) * (len(shape) - d - 1))
    filled = b.op("Where", [b.const(lower), b.unsqueeze(x, [d]), _scalar(b, fill, dtype)])
    return filled, d + 1


def _extreme(dtype, sign):
    if dtype in ("float16", "float32", "float64"):
        return sign * np.inf
    if dtype == "bool":
        return sign > 0
    info = np.iinfo(np.dtype(dtype))
    return info.max if sign > 0 else info.min


@onnx_op("cumprod")
def _cumprod(b, call):
    dt = call.out_dtypes[0]
    t, axis = _triangle(b, call, b.cast(call.ins[0], call.in_dtypes[0], dt), dt, 1)
    return b.reduce("ReduceProd", t, [axis], False)


@onnx_op("cummax", "cummin")
def _cummax(b, call):
    big = call.op == "cummax"
    dt = call.in_dtypes[0]
    t, axis = _triangle(b, call, call.ins[0], dt, _extreme(dt, -1 if big else 1))
    values = b.reduce("ReduceMax" if big else "ReduceMin", t, [axis], False)
    # the later index on ties, as an element equal to the running extreme replaces it
    indices = b.op("ArgMax" if big else "ArgMin", [t], axis=axis, keepdims=0,
                   select_last_index=1)
    return [values, indices]


@onnx_op("sort")
def _sort(b, call):
    shape = call.in_shapes[0]
    d = int(call.params["dim"]) % max(len(shape), 1)
    k = b.size_tensor(shape[d] if shape else 1)
    # TopK puts equal elements in index order, in both directions: a stable sort
    values, indices = b.op("TopK", [call.ins[0], k], n_out=2, axis=d,
                           largest=int(bool(call.params.get("descending"))), sorted=1)
    return [values, indices]


@onnx_op("searchsorted")
def _searchsorted(b, call):
    seq, values = call.ins
    dt = call.in_dtypes[0]
    values = b.cast(values, call.in_dtypes[1], dt)
    cmp = "LessOrEqual" if call.params.get("right") else "Less"
    below = b.op(cmp, [b.unsqueeze(seq, [1]), b.unsqueeze(values, [2])])    # (B, N, M)
    return b.reduce("ReduceSum", b.cast(below, "bool", "int64"), [2], False)


@onnx_op("bitwise_left_shift", "bitwise_right_shift")
def _shift(b, call):
    dt = call.out_dtypes[0]
    a, s = [b.cast(x, d, "int64") for x, d in zip(call.ins, call.in_dtypes)]
    p = b.op("Pow", [b.const(np.asarray(2, np.int64)), s])
    if call.op == "bitwise_left_shift":
        return b.cast(b.op("Mul", [a, p]), "int64", dt)
    q = b.op("Div", [a, p])                           # truncates; >> rounds down
    inexact = b.op("And", [b.op("Less", [a, b.const(np.asarray(0, np.int64))]),
                           b.op("Not", [b.op("Equal", [b.op("Mul", [q, p]), a])])])
    return b.cast(b.op("Sub", [q, b.cast(inexact, "bool", "int64")]), "int64", dt)


_SCATTER_REDUCE = {"none": "none", "sum": "add", "prod": "mul", "amax": "max", "amin": "min"}


@onnx_op("scatter_")
def _scatter(b, call):
    out, index, src = call.ins
    reduce = _SCATTER_REDUCE[call.params.get("reduce", "none")]
    if reduce in ("max", "min") and b.opset < 18:
        raise NotImplementedError(f"reduce={call.params['reduce']!r} needs opset_version 18 "
                                  f"or newer (asked for {b.opset})")
    return b.op("ScatterElements", [out, index, b.cast(src, call.in_dtypes[2],
                                                        call.in_dtypes[0])],
                axis=int(call.params["dim"]), reduction=reduce)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2010): single precision
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@onnx_op("erfinv")
def _erfinv(b, call):
    x = call.ins[0]
    dt = call.in_dtypes[0]
    one = _scalar(b, 1.0, dt)
    w = b.op("Neg", [b.op("Log", [b.op("Mul", [b.op("Sub", [one, x]), b.op("Add", [one, x])])])])

    def horner(coeffs, t):
        p = _scalar(b, coeffs[0], dt)
        for c in coeffs[1:]:
            p = b.op("Add", [_scalar(b, c, dt), b.op("Mul", [p, t])])
        return p
    central = horner(_ERFINV_CENTRAL, b.op("Sub", [w, _scalar(b, 2.5, dt)]))
    tail = horner(_ERFINV_TAIL, b.op("Sub", [b.op("Sqrt", [w]), _scalar(b, 3.0, dt)]))
    p = b.op("Where", [b.op("Less", [w, _scalar(b, 5.0, dt)]), central, tail])
    y = b.op("Mul", [p, x])
    edge = b.op("Equal", [b.op("Abs", [x]), one])            # erfinv(+-1) = +-inf
    return b.op("Where", [edge, b.op("Mul", [x, _scalar(b, np.inf, dt)]), y])
