"""Sample cases of the elementwise ops: every dtype, 0-d, empty, broadcast and strided
inputs, NaN and infinities, scalars on either side, function / method / operator /
in-place forms."""
import operator

import numpy as np
import scipy.special as sp

from dispatchtorch.dispatch.registry import operand_domains, sample_domains
from op_harness import ALL, FLOATS, INTS, A, Case

CASES = []


def add(*cases):
    CASES.extend(cases)


# -- unary -------------------------------------------------------------------------------------
# name: (input kind, numpy reference or None, differentiable, second derivative non-trivial)
UNARY = {
    "exp": ("normal", np.exp, True, True), "exp2": ("normal", np.exp2, True, True),
    "expm1": ("normal", np.expm1, True, True), "log": ("positive", np.log, True, True),
    "log2": ("positive", np.log2, True, True), "log10": ("positive", np.log10, True, True),
    "log1p": ("positive", np.log1p, True, True), "sqrt": ("positive", np.sqrt, True, True),
    "rsqrt": ("positive", lambda x: 1 / np.sqrt(x), True, True),
    "reciprocal": ("nonzero", lambda x: 1 / x, True, True),
    "sin": ("normal", np.sin, True, True), "cos": ("normal", np.cos, True, True),
    "tan": ("unit", np.tan, True, True), "asin": ("unit", np.arcsin, True, True),
    "acos": ("unit", np.arccos, True, True), "atan": ("normal", np.arctan, True, True),
    "sinh": ("normal", np.sinh, True, True), "cosh": ("normal", np.cosh, True, True),
    "tanh": ("normal", np.tanh, True, True), "asinh": ("normal", np.arcsinh, True, True),
    "acosh": ("above1", np.arccosh, True, True), "atanh": ("unit", np.arctanh, True, True),
    "erf": ("normal", sp.erf, True, True), "erfc": ("normal", sp.erfc, True, True),
    "erfinv": ("unit", sp.erfinv, True, True), "sigmoid": ("normal", sp.expit, True, True),
    "logit": ("prob", sp.logit, True, True),
    "relu": ("normal", lambda x: np.maximum(x, 0), True, False),
    "floor": ("normal", np.floor, True, False), "ceil": ("normal", np.ceil, True, False),
    "round": ("normal", np.round, True, False), "trunc": ("normal", np.trunc, True, False),
    "frac": ("normal", lambda x: x - np.trunc(x), True, False),
    "neg": ("normal", np.negative, True, False), "abs": ("nonzero", np.abs, True, False),
    "sign": ("nonzero", np.sign, True, False), "square": ("normal", np.square, True, True),
    "nan_to_num": ("special", None, True, False),      # numpy's infinities are float64's
    "bitwise_not": ("int", None, False, False), "logical_not": ("int", np.logical_not, False, False),
    "isnan": ("special", np.isnan, False, False), "isinf": ("special", np.isinf, False, False),
    "isfinite": ("special", np.isfinite, False, False),
    "isposinf": ("special", np.isposinf, False, False),
    "isneginf": ("special", np.isneginf, False, False),
}
INPLACE = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
           "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "erf", "erfc", "erfinv", "sigmoid", "logit", "relu", "floor", "ceil", "round",
           "trunc", "frac", "neg", "abs", "sign", "square", "nan_to_num", "bitwise_not",
           "logical_not"}


def _unary(name, kind, ref, diff, second):
    f = lambda T, x: getattr(T, name)(x)         # noqa: E731
    add(Case(name, f, (A((3, 4), kind),), ALL, ref, grad=diff, gradgrad=second),
        Case(name, f, (A((), kind),), ALL, ref, grad=diff, name="0d"),
        Case(name, f, (A((0, 3), kind),), ALL, ref, grad=False, name="empty"),
        Case(name, lambda T, x: getattr(x, name)(), (A((2, 3), kind),), FLOATS, ref,
             grad=diff, name="method"))
    if name in INPLACE:
        add(Case(name, lambda T, x: getattr(x.clone(), name + "_")(), (A((2, 3), kind),), ALL,
                 ref, grad=diff, name="inplace"))
    if kind != "special" and name not in ("bitwise_not", "logical_not"):
        add(Case(name, f, (A((7,), "special"),), FLOATS, ref, grad=False, name="nan-inf"))


# the rows' sample domains replace the value kind (one source with the conformance suite)
_DOMAINS = sample_domains("elementwise")
for _name, _spec in UNARY.items():
    _unary(_name, _DOMAINS.get(_name, _spec[0]), *_spec[1:])

add(Case("round", lambda T, x: T.round(x, decimals=2), (A((3, 4)),), FLOATS,
         lambda x: np.round(x, 2), name="decimals=2", rtol=1e-3, atol=1e-2),
    Case("round", lambda T, x: T.round(x * 100, decimals=-1), (A((3, 4)),), FLOATS,
         lambda x: np.round(x * 100, -1), grad=False, name="decimals=-1", rtol=1e-3, atol=1e-1),
    Case("round", lambda T, x: T.round(x, decimals=1), (A((3,)),), INTS, name="int decimals",
         grad=False),
    Case("logit", lambda T, x: T.logit(x, eps=0.2), (A((3, 4), "prob"),), FLOATS,
         lambda x: sp.logit(np.clip(x, 0.2, 0.8)), name="eps"),
    Case("nan_to_num", lambda T, x: T.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0),
         (A((7,), "special"),), ALL, lambda x: np.nan_to_num(x, nan=1.5, posinf=9, neginf=-9),
         grad=False, name="values"),
    Case("neg", lambda T, x: -x, (A((3, 4)),), ALL, np.negative, name="operator"),
    Case("abs", lambda T, x: abs(x), (A((3, 4), "nonzero"),), ALL, np.abs, name="operator"),
    Case("bitwise_not", lambda T, x: ~x, (A((3, 4), "int"),), ALL, grad=False, name="operator"),
    Case("sign", lambda T, x: T.sgn(x), (A((3, 4), "nonzero"),), ALL, np.sign, name="sgn"),
    Case("square", lambda T, x: T.square(x), (A((3, 4), "int"),), ("bool",) + INTS, grad=False,
         name="ints"))

# -- binary -----------------------------------------------------------------------------------------
# name: (kinds of a and b, numpy reference, differentiable, scalar forms PyTorch accepts)
BINARY = {
    "add": (("normal", "normal"), np.add, True, "both"),
    "sub": (("normal", "normal"), np.subtract, True, "both"),
    "mul": (("normal", "normal"), np.multiply, True, "both"),
    "div": (("normal", "nonzero"), np.divide, True, "both"),
    "true_divide": (("normal", "nonzero"), np.divide, True, "both"),
    "floor_divide": (("normal", "nonzero"), np.floor_divide, False, "both"),
    "remainder": (("normal", "nonzero"), np.remainder, True, "both"),
    "fmod": (("normal", "nonzero"), np.fmod, True, "other"),
    "pow": (None, np.power, True, "both"),            # kinds None: the row's sample domains
    "atan2": (("normal", "normal"), np.arctan2, True, "none"),
    "maximum": (("normal", "normal"), np.maximum, True, "none"),
    "minimum": (("normal", "normal"), np.minimum, True, "none"),
    "fmax": (("normal", "normal"), np.fmax, True, "none"),
    "fmin": (("normal", "normal"), np.fmin, True, "none"),
    "hypot": (("normal", "normal"), np.hypot, True, "none"),
    "xlogy": (None, sp.xlogy, True, "both"),
    "logaddexp": (("normal", "normal"), np.logaddexp, True, "none"),
    "eq": (("int", "int"), np.equal, False, "other"), "ne": (("int", "int"), np.not_equal, False, "other"),
    "lt": (("int", "int"), np.less, False, "other"), "le": (("int", "int"), np.less_equal, False, "other"),
    "gt": (("int", "int"), np.greater, False, "other"),
    "ge": (("int", "int"), np.greater_equal, False, "other"),
    "logical_and": (("int", "int"), np.logical_and, False, "none"),
    "logical_or": (("int", "int"), np.logical_or, False, "none"),
    "logical_xor": (("int", "int"), np.logical_xor, False, "none"),
    "bitwise_and": (("int", "int"), None, False, "both"),
    "bitwise_or": (("int", "int"), None, False, "both"),
    "bitwise_xor": (("int", "int"), None, False, "both"),
    "bitwise_left_shift": (("small", "small"), None, False, "both"),
    "bitwise_right_shift": (("int", "small"), None, False, "both"),
}
ROW = {"true_divide": "div"}
NO_INPLACE = {"maximum", "minimum", "fmax", "fmin", "logaddexp"}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (2, 3)), ((2, 3), ()),
          ((0, 3), (3,))]
DTYPE_PAIRS = [("float32", "float64"), ("int32", "float16"), ("bool", "int8"),
               ("uint8", "int8"), ("int64", "bfloat16"), ("float16", "bfloat16")]


# second derivatives that are not trivially zero: checked with gradgradcheck
SECOND_ORDER = {"mul", "div", "true_divide", "pow", "atan2", "hypot", "xlogy", "logaddexp", "maximum",
                "minimum", "remainder", "fmod"}


def _operand_kinds(name):
    """The value kinds of a binary op's operands: its table's, or its row's sample domains."""
    from dispatchtorch.dispatch import OPS
    return BINARY[name][0] or operand_domains(OPS[ROW.get(name, name)])


def _binary(name, kinds, ref, diff, scalars):
    row = ROW.get(name, name)
    kinds = _operand_kinds(name)
    f = lambda T, a, b: getattr(T, name)(a, b)         # noqa: E731
    ka, kb = kinds
    for sa, sb in SHAPES:
        empty = 0 in sa
        add(Case(row, f, (A(sa, ka), A(sb, kb)), ALL, ref, grad=diff and not empty and
                 (len(sa) + len(sb)) < 5, gradgrad=name in SECOND_ORDER and sa == (3, 4),
                 name=f"{name} {sa}x{sb}"))
    for da, db in DTYPE_PAIRS:       # type promotion between tensors of two dtypes
        add(Case(row, f, (A((2, 3), ka, da), A((3,), kb, db)), ("float32",), ref, grad=False,
                 name=f"{name} {da}x{db}"))
    for s in (2, -1.5, True, 0):
        if (name in ("div", "true_divide", "remainder", "fmod", "floor_divide") and s == 0) or \
                (name == "pow" and s == -1.5):
            continue
        singular = name in ("pow", "xlogy") and s in (0, -1.5)     # log(0), log(< 0)
        add(Case(row, lambda T, a, s=s: getattr(T, name)(a, s), (A((2, 3), ka),), ALL,
                 (lambda a, s=s: ref(a, s)) if ref else None, grad=diff and not singular,
                 name=f"{name} tensor,{s!r}"),
            Case(row, lambda T, b, s=s: getattr(T, name)(s, b), (A((2, 3), kb),), ALL,
                 (lambda b, s=s: ref(s, b)) if ref else None, grad=diff and not singular,
                 name=f"{name} {s!r},tensor"))
    add(Case(row, lambda T, a, b: getattr(a, name)(b), (A((2, 3), ka), A((3,), kb)), FLOATS,
             ref, grad=diff, name=f"{name} method"))
    if name not in NO_INPLACE:
        add(Case(row, lambda T, a, b: getattr(a.clone(), name + "_")(b),
                 (A((2, 3), ka), A((3,), kb)), ALL, ref, grad=diff, name=f"{name} inplace"))


for _name, _spec in BINARY.items():
    _binary(_name, *_spec)

_INPLACE_OPERATORS = {"+": operator.iadd, "-": operator.isub, "*": operator.imul,
                      "/": operator.itruediv, "//": operator.ifloordiv, "%": operator.imod,
                      "**": operator.ipow, "&": operator.iand, "|": operator.ior,
                      "^": operator.ixor, "<<": operator.ilshift, ">>": operator.irshift}
OPERATORS = [("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"), ("floor_divide", "//"),
             ("remainder", "%"), ("pow", "**"), ("eq", "=="), ("ne", "!="), ("lt", "<"),
             ("le", "<="), ("gt", ">"), ("ge", ">="), ("bitwise_and", "&"), ("bitwise_or", "|"),
             ("bitwise_xor", "^"), ("bitwise_left_shift", "<<"), ("bitwise_right_shift", ">>")]
for _row, _op in OPERATORS:
    if _op in ("==", "!=", "<", "<=", ">", ">="):
        _INPLACE_OPERATORS[_op] = getattr(operator, {"==": "eq", "!=": "ne", "<": "lt",
                                                     "<=": "le", ">": "gt", ">=": "ge"}[_op])
    _kinds = _operand_kinds(_row)
    _diff = BINARY[_row][2]
    add(Case(_row, eval(f"lambda T, a, b: a {_op} b"), (A((2, 3), _kinds[0]), A((3,), _kinds[1])),
             ALL, grad=_diff, name=f"a {_op} b"),
        Case(_row, eval(f"lambda T, b: 3 {_op} b"), (A((2, 3), _kinds[1]),), ALL, grad=_diff,
             name=f"3 {_op} b"),
        Case(_row, lambda T, a, b, op=_op: _INPLACE_OPERATORS[op](a.clone(), b),
             (A((2, 3), _kinds[0]), A((3,), _kinds[1])), ALL, grad=_diff, name=f"a {_op}= b"))


add(Case("add", lambda T, a, b: T.add(a, b, alpha=2), (A((2, 3)), A((3,))), ALL,
         lambda a, b: a + 2 * b, name="alpha=2"),
    Case("add", lambda T, a, b: a.clone().add_(b, alpha=-0.5), (A((2, 3)), A((3,))), FLOATS,
         lambda a, b: a - 0.5 * b, name="add_ alpha"),
    Case("sub", lambda T, a, b: T.sub(a, b, alpha=3), (A((2, 3)), A((3,))), ALL,
         lambda a, b: a - 3 * b, name="alpha=3"),
    Case("sub", lambda T, a, b: T.rsub(a, b), (A((2, 3)), A((3,))), ALL,
         lambda a, b: b - a, name="rsub"),
    Case("sub", lambda T, a: T.rsub(a, 2.5, alpha=2), (A((2, 3)),), ALL,
         lambda a: 2.5 - 2 * a, name="rsub scalar alpha"),
    Case("div", lambda T, a, b: T.div(a, b, rounding_mode="trunc"), (A((2, 3)), A((3,), "nonzero")),
         ALL, lambda a, b: np.trunc(a / b), grad=False, name="trunc"),
    Case("div_floor", lambda T, a, b: T.div(a, b, rounding_mode="floor"),
         (A((2, 3)), A((3,), "nonzero")), ALL, lambda a, b: np.floor_divide(a, b), fd=False,
         name="floor (zero gradient, as PyTorch's)"),
    Case("div", lambda T, a, b: a.clone().div_(b, rounding_mode="floor"),
         (A((2, 3)), A((3,), "nonzero")), ALL, grad=False, name="div_ floor"),
    Case("div", lambda T, a: T.div(a, 0), (A((2, 3), "int"),), INTS, grad=False,
         name="int by zero", raises=None),
    Case("floor_divide", lambda T, a: T.floor_divide(a, 0), (A((2, 3), "int"),), INTS,
         name="int by zero", grad=False, raises=RuntimeError),
    Case("remainder", lambda T, a, b: T.remainder(a, b), (A((3, 4), "int"), A((4,), "nonzero")),
         ("int64", "int8"), name="int signs", grad=False),
    Case("pow", lambda T, a, b: T.pow(a, b), (A((3, 4), "int"), A((4,), "small")), INTS,
         grad=False, name="int powers"),
    Case("pow", lambda T, a, b: T.pow(a, b - 2), (A((3, 4), "int"), A((4,), "small")),
         ("int64", "int32"), grad=False, name="negative int exponents"),
    Case("pow", lambda T, a: T.pow(a, -2), (A((3,), "int"),), ("int64",), grad=False,
         name="int to negative scalar", raises=RuntimeError),
    Case("pow", lambda T, a: T.pow(2.5, a), (A((2, 3)),), FLOATS, lambda a: 2.5 ** a,
         name="scalar base"),
    Case("pow", lambda T, a: T.float_power(a, 2), (A((2, 3)),), ALL, lambda a: a ** 2.0,
         name="float_power", grad=False),
    Case("bitwise_left_shift", lambda T, a, b: a << b, (A((4,), "int"), A((4,), "int")),
         ("int64", "int8", "uint8"), grad=False, name="out-of-range shifts"),
    Case("bitwise_right_shift", lambda T, a: a >> 70, (A((4,), "int"),), ("int64", "int16"),
         grad=False, name="shift past width"),
    Case("maximum", lambda T, a, b: T.maximum(a, b), (A((2, 3), "small"), A((3,), "small")),
         FLOATS, np.maximum, name="ties"),
    Case("minimum", lambda T, a, b: T.minimum(a, b), (A((7,), "special"), A((7,))), FLOATS,
         np.minimum, grad=False, name="nan propagates"),
    Case("fmax", lambda T, a, b: T.fmax(a, b), (A((2, 3), "small"), A((3,), "small")), FLOATS,
         np.fmax, name="ties", fd=False),
    Case("fmax", lambda T, a, b: T.fmax(a, b), (A((7,), "special"), A((7,))), FLOATS,
         np.fmax, grad=False, name="nan ignored"),
    Case("fmin", lambda T, a, b: T.fmin(b, a), (A((7,), "special"), A((7,))), FLOATS,
         lambda a, b: np.fmin(b, a), grad=False, name="nan ignored"),
    Case("xlogy", lambda T, a, b: T.xlogy(a * 0, b), (A((2, 3)), A((3,), "special")), FLOATS,
         grad=False, name="zero x"),
    Case("logaddexp", lambda T, a, b: T.logaddexp(a, b), (A((7,), "special"), A((7,), "special")),
         FLOATS, np.logaddexp, grad=False, name="infinities"),
    Case("eq", lambda T, a, b: a == b, (A((7,), "special"), A((7,), "special")), FLOATS,
         np.equal, grad=False, name="nan unequal"),
    Case("ne", lambda T, a: a != None, (A((3,)),), FLOATS, grad=False, name="!= None"))   # noqa: E711

# -- three operands --------------------------------------------------------------------------------
add(Case("where", lambda T, c, a, b: T.where(c, a, b),
         (A((3, 4), "bool", "bool"), A((3, 4)), A((4,))), ALL,
         lambda c, a, b: np.where(c, a, b)),
    Case("where", lambda T, c, a: T.where(c, a, 0.5), (A((3, 1), "bool", "bool"), A((1, 4))),
         ALL, lambda c, a: np.where(c, a, 0.5), name="scalar other"),
    Case("where", lambda T, c: T.where(c, 1.0, 0), (A((3, 4), "bool", "bool"),), ("float32",),
         lambda c: np.where(c, 1.0, 0.0), grad=False, name="two scalars"),
    Case("where", lambda T, c, a, b: a.where(c, b), (A((), "bool", "bool"), A((2, 3)), A(())),
         ALL, lambda c, a, b: np.where(c, a, b), name="method 0d"),
    Case("where", lambda T, c, a, b: T.where(c, a, b),
         (A((0, 3), "bool", "bool"), A((0, 3)), A((3,))), ALL, grad=False, name="empty"),
    Case("where", lambda T, a: T.where(a > 0, a, 2.0), (A((2, 3), "int"),), INTS, grad=False,
         name="int and float scalar"),
    Case("where", lambda T, c, a: T.where(c, a, a), (A((3,), "int", "int64"), A((3,))),
         ("float32",), grad=False, name="non-bool condition", raises=RuntimeError),
    Case("lerp", lambda T, a, b: T.lerp(a, b, 0.3), (A((2, 3)), A((3,))), FLOATS,
         lambda a, b: a + 0.3 * (b - a)),
    Case("lerp", lambda T, a, b, w: T.lerp(a, b, w), (A((2, 3)), A((3,)), A((2, 1), "prob")),
         FLOATS, lambda a, b, w: a + w * (b - a), gradgrad=True, name="tensor weight"),
    Case("lerp", lambda T, a, b: a.clone().lerp_(b, 0.75), (A((2, 3)), A((2, 3))), FLOATS,
         lambda a, b: a + 0.75 * (b - a), name="lerp_"),
    Case("lerp", lambda T, a, b: T.lerp(a, b, 0.5), (A((2, 3)), A((3,), dtype="float64")),
         ("float32",), name="mixed dtypes", raises=RuntimeError, grad=False),
    Case("lerp", lambda T, a, b: T.lerp(a, b, 0.5), (A((2, 3), "int"), A((3,), "int")), INTS,
         name="ints", grad=False),
    Case("clamp", lambda T, x: T.clamp(x, -1, 1.5), (A((3, 4)),), ALL, lambda x: np.clip(x, -1, 1.5)),
    Case("clamp", lambda T, x: T.clamp(x, min=0.5), (A((3, 4)),), ALL,
         lambda x: np.maximum(x, 0.5), name="min only"),
    Case("clamp", lambda T, x: T.clip(x, max=-0.5), (A((3, 4)),), ALL,
         lambda x: np.minimum(x, -0.5), name="clip max only"),
    Case("clamp", lambda T, x, lo, hi: T.clamp(x, lo, hi), (A((3, 4)), A((4,)), A((3, 1))), FLOATS,
         lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), name="tensor bounds"),
    Case("clamp", lambda T, x: T.clamp(x, 2, 1), (A((3, 4)),), FLOATS, lambda x: np.full_like(x, 1),
         name="min > max"),
    Case("clamp", lambda T, x, lo, d: T.clamp(x, lo, lo - d * d - 0.5), (A((3, 4)), A((4,)), A((3, 1))),
         FLOATS, lambda x, lo, d: np.broadcast_to(lo - d * d - 0.5, x.shape),
         name="tensor min > max (the gradient goes to max, as PyTorch's)"),
    Case("clamp", lambda T, x: x.clone().clamp_(min=-0.5), (A((3, 4)),), ALL,
         lambda x: np.maximum(x, -0.5), name="clamp_"),
    Case("clamp", lambda T, x: x.clamp_min(0.1), (A((3, 4)),), FLOATS, lambda x: np.maximum(x, 0.1),
         name="clamp_min"),
    Case("clamp", lambda T, x: x.clone().clamp_max_(0.1), (A((3, 4)),), FLOATS,
         lambda x: np.minimum(x, 0.1), name="clamp_max_"),
    Case("clamp", lambda T, x: T.clamp(x, min=0.5), (A((7,), "special"),), FLOATS,
         lambda x: np.where(np.isnan(x), np.nan, np.maximum(x, 0.5)), grad=False, name="nan"),
    Case("clamp", lambda T, x: T.clamp(x), (A((3,)),), FLOATS, grad=False, name="no bounds",
         raises=RuntimeError),
    )


# -- rows that declare their public forms: cases made from the row alone ----------------------
# (function, method and in-place forms, over the row's sample domain and dtype rule, against
# PyTorch; the conformance suite makes its cases from the same rows)
def row_cases(covered):
    """The cases of the rows with forms and a sample domain that no case of any category
    covers (covered: the op names of those cases; op_cases/__init__ calls this last)."""
    from dispatchtorch.dispatch import OPS
    from dispatchtorch.dispatch.registry import input_category
    from dispatchtorch.ops._elementwise import _CATEGORIES
    import dispatchtorch._dtype as D
    for name, op in sorted(OPS.items()):
        forms = op.forms
        if forms is None or op.kind != "elementwise" or op.domain is None or name in covered:
            continue
        cats = _CATEGORIES[input_category(op)]
        dts = tuple(d for d in ALL if D.BY_NAME[d].category in cats) \
            if hasattr(D, "BY_NAME") else None
        doms = operand_domains(op)
        ins = tuple(A((3, 4), d) for d in doms)
        add(Case(name, lambda T, *xs, name=name: getattr(T, name)(*xs), ins, dts,
                 grad=op.differentiable),
            Case(name, lambda T, *xs, name=name: getattr(T, name)(*xs),
                 (A((2, 1, 3), doms[0]),) + tuple(A((4, 1), d) for d in doms[1:]),
                 dts, grad=False, name="broadcast"),
            Case(name, lambda T, *xs, name=name: getattr(T, name)(*xs),
                 tuple(A((0, 3), d) for d in doms), dts, grad=False, name="empty"),
            Case(name, lambda T, x, *r, name=name: getattr(x, name)(*r), ins, dts, grad=False,
                 name="method"))
        if forms.inplace:
            add(Case(name, lambda T, x, *r, name=name: getattr(x.clone(), name + "_")(*r), ins,
                     dts, grad=False, name="inplace"))

