"""Tensor methods and operators, bound from the function forms in one table."""
from __future__ import annotations

from .. import _dtype as D
from .._sparse_forms import SparseOperand, call as sparse_call
from .._tensor import Tensor
from . import creation as C
from . import random_sampling as RS
from . import subscript as SUB
from . import linalg as L
from . import memory as M
from . import pointwise as P
from . import reductions as R
from . import views as V
from . import elementwise as E
from ._bare_support import check_reflected
from ._elementwise import binary

# method name -> function (the function's first argument becomes self)
METHODS = {
    **P.FUNCTIONS, **P.INPLACE,
    "add": P.add, "add_": P.add_, "sub": P.sub, "sub_": P.sub_, "subtract": P.sub,
    "multiply": P.mul, "div": P.div, "div_": P.div_, "divide": P.div, "true_divide": P.div,
    "floor_divide": P.floor_divide, "remainder": P.remainder, "pow": P.pow, "float_power": P.float_power,
    "floor": P.floor, "ceil": P.ceil, "trunc": P.trunc, "fix": P.trunc, "round": P.round,
    "clamp": P.clamp, "clamp_": P.clamp_, "clip": P.clamp, "clip_": P.clamp_,
    "clamp_min": P.clamp_min, "clamp_max": P.clamp_max, "fmod": P.fmod, "square": P.square,
    "bitwise_left_shift": P.bitwise_left_shift, "bitwise_right_shift": P.bitwise_right_shift,
    "logit": P.logit, "lerp": P.lerp, "nan_to_num": P.nan_to_num, "rsub": P.rsub,
    **{n: getattr(P, n) for n in (
        "true_divide_", "divide_", "floor_divide_", "remainder_", "fmod_", "floor_", "ceil_",
        "trunc_", "fix_", "round_", "pow_", "float_power_", "square_", "bitwise_left_shift_",
        "bitwise_right_shift_", "clamp_min_", "clamp_max_", "logical_not_", "logical_and_",
        "logical_or_", "logical_xor_", "logit_", "lerp_", "nan_to_num_")},
    "logical_not": P.logical_not, "logical_and": P.logical_and, "logical_or": P.logical_or,
    "logical_xor": P.logical_xor, "isnan": P.isnan, "isinf": P.isinf, "isfinite": P.isfinite,
    "isposinf": P.isposinf, "isneginf": P.isneginf, "where": lambda self, cond, other: P.where(cond, self, other),
    "greater": P.gt, "greater_equal": P.ge, "less": P.lt, "less_equal": P.le, "not_equal": P.ne,
    "arctan2": P.atan2, "positive": P.positive,
    # reductions
    "sum": R.sum, "prod": R.prod, "nansum": R.nansum, "mean": R.mean, "nanmean": R.nanmean, "amax": R.amax,
    "amin": R.amin, "max": R.max, "min": R.min, "argmax": R.argmax, "argmin": R.argmin,
    "all": R.all, "any": R.any, "sum_to_size": R.sum_to_size, "count_nonzero": R.count_nonzero,
    # linear algebra
    "matmul": L.matmul, "mm": L.mm, "bmm": L.bmm,
    # views
    "view": V.view, "view_as": V.view_as, "reshape": V.reshape, "reshape_as": V.reshape_as,
    "permute": V.permute, "transpose": V.transpose, "swapaxes": V.transpose, "swapdims": V.transpose,
    "t": V.t, "movedim": V.movedim, "moveaxis": V.movedim, "expand": V.expand,
    "expand_as": V.expand_as, "broadcast_to": V.broadcast_to, "squeeze": V.squeeze,
    "unsqueeze": V.unsqueeze, "flatten": V.flatten, "unflatten": V.unflatten, "narrow": V.narrow,
    "select": V.select, "diagonal": V.diagonal, "unfold": V.unfold, "split": V.split,
    "chunk": V.chunk, "unbind": V.unbind, "as_strided": V.as_strided,
    # memory
    "clone": M.clone, "contiguous": M.contiguous, "to": M.to, "cpu": M.cpu, "cuda": M.cuda,
    "type": M.type_, "copy_": M.copy_, "fill_": M.fill_, "zero_": M.zero_,
    # indexing (gather_scatter.py's and subscript.py's rows bind their own methods)
    "__getitem__": SUB.getitem, "__setitem__": SUB.setitem,
    # random, in place
    "uniform_": RS.uniform_, "normal_": RS.normal_, "bernoulli_": RS.bernoulli_,
    "random_": RS.random_, "exponential_": RS.exponential_, "geometric_": RS.geometric_,
    "log_normal_": RS.log_normal_, "cauchy_": RS.cauchy_,
    "bernoulli": RS.bernoulli,
    # new_* factories
    "new_zeros": lambda self, *size, dtype=None, device=None, requires_grad=False: C.zeros(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad),
    "new_ones": lambda self, *size, dtype=None, device=None, requires_grad=False: C.ones(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad),
    "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: C.empty(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad),
    "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: C.full(
        size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
        requires_grad=requires_grad),
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False: C.tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad),
}

for _dt, _names in ((D.float32, ("float",)), (D.float64, ("double",)), (D.float16, ("half",)),
                    (D.bfloat16, ("bfloat16",)), (D.int64, ("long",)), (D.int32, ("int",)),
                    (D.int16, ("short",)), (D.int8, ("char",)), (D.uint8, ("byte",)),
                    (D.bool_, ("bool",))):
    for _n in _names:
        METHODS[_n] = M._to_dtype(_dt)


def _reflected(fn):
    def r(self, other):
        return fn(other, self)
    return r


def _operator(fn):
    """An operator returns NotImplemented for operands it does not understand, so Python
    can try the other side (and `t == None` is False, as in PyTorch)."""
    def op(self, other):
        if not isinstance(other, (Tensor, int, float, bool, complex)) and not hasattr(other, "__index__") \
                and not hasattr(other, "__float__"):
            return NotImplemented
        return fn(self, other)
    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _binary_operator(spec, reflected=False):
    """`a + b` straight to the elementwise executor (the function form adds only
    argument handling that an operator never needs)."""
    def op(self, other):
        t = type(other)
        if not (t is Tensor or t is float or t is int or t is bool or t is complex or isinstance(other, Tensor)
                or hasattr(other, "__index__") or hasattr(other, "__float__")):
            return NotImplemented
        if reflected and self._dtype.bare and self._dtype.is_floating_point and \
                not isinstance(other, Tensor):
            check_reflected(spec.name, self._dtype, other)
        try:
            return binary(spec, other, self) if reflected else binary(spec, self, other)
        except SparseOperand as exc:    # a Parameter beside a sparse COO tensor
            return sparse_call(spec.name, exc, (other, self) if reflected else (self, other), {})
    op.__name__ = spec.name
    return op


def _inplace_operator(fn):
    def op(self, other):
        return fn(self, other)
    return op


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return P.FUNCTIONS["bitwise_not"](self)


OPERATORS = {
    "__add__": _binary_operator(E.add), "__radd__": _binary_operator(E.add, True),
    "__sub__": _operator(P.sub), "__rsub__": _operator(_reflected(P.sub)),
    "__mul__": _binary_operator(E.mul), "__rmul__": _binary_operator(E.mul, True),
    "__truediv__": _binary_operator(E.div), "__rtruediv__": _binary_operator(E.div, True),
    "__rdiv__": _binary_operator(E.div, True),       # PyTorch keeps Python 2's name too
    "__floordiv__": _operator(P.floor_divide), "__rfloordiv__": _operator(_reflected(P.floor_divide)),
    "__mod__": _operator(P.remainder), "__rmod__": _operator(_reflected(P.remainder)),
    "__pow__": _operator(P.pow), "__rpow__": _operator(_reflected(P.pow)),
    "__matmul__": L.matmul, "__rmatmul__": _reflected(L.matmul),
    "__and__": _operator(P.FUNCTIONS["bitwise_and"]), "__rand__": _operator(_reflected(P.FUNCTIONS["bitwise_and"])),
    "__or__": _operator(P.FUNCTIONS["bitwise_or"]), "__ror__": _operator(_reflected(P.FUNCTIONS["bitwise_or"])),
    "__xor__": _operator(P.FUNCTIONS["bitwise_xor"]), "__rxor__": _operator(_reflected(P.FUNCTIONS["bitwise_xor"])),
    "__lshift__": _operator(P.bitwise_left_shift), "__rshift__": _operator(P.bitwise_right_shift),
    "__rlshift__": _operator(_reflected(P.bitwise_left_shift)),
    "__rrshift__": _operator(_reflected(P.bitwise_right_shift)),
    "__ilshift__": _inplace_operator(P.bitwise_left_shift_),
    "__irshift__": _inplace_operator(P.bitwise_right_shift_),
    "__eq__": _binary_operator(E.eq), "__ne__": _binary_operator(E.ne),
    "__lt__": _binary_operator(E.lt), "__le__": _binary_operator(E.le),
    "__gt__": _binary_operator(E.gt), "__ge__": _binary_operator(E.ge),
    "__neg__": P.FUNCTIONS["neg"], "__pos__": P.positive, "__abs__": P.FUNCTIONS["abs"],
    "__invert__": _invert,
    "__iadd__": _inplace_operator(P.add_), "__isub__": _inplace_operator(P.sub_),
    "__imul__": _inplace_operator(P.INPLACE["mul_"]), "__itruediv__": _inplace_operator(P.div_),
    "__iand__": _inplace_operator(P.INPLACE["bitwise_and_"]),
    "__ior__": _inplace_operator(P.INPLACE["bitwise_or_"]),
    "__ixor__": _inplace_operator(P.INPLACE["bitwise_xor_"]),
    "__ipow__": _inplace_operator(P.pow_),
    "__imod__": _inplace_operator(P.remainder_),
    "__ifloordiv__": _inplace_operator(P.floor_divide_),
}


def bind():
    """Bind this table, then every op module's own `METHODS` dict (a module that adds
    ops declares its methods next to them and needs no edit here)."""
    import sys
    table = {**METHODS, **OPERATORS}
    owner = dict.fromkeys(table, __name__)
    for mod in list(sys.modules.values()):
        mod_name = getattr(mod, "__name__", "") or ""
        if mod_name.startswith(("dispatchtorch.ops.", "dispatchtorch.nn.")) and mod is not sys.modules[__name__]:
            for name, fn in (getattr(mod, "METHODS", {}) or {}).items():
                if name in table and table[name] is not fn:   # which wins would be import order
                    raise ImportError(f"Tensor.{name} is defined by both {owner[name]} and "
                                      f"{mod_name}; keep one")
                table[name], owner[name] = fn, mod_name
    for name, fn in table.items():
        setattr(Tensor, name, fn)
    Tensor.__hash__ = object.__hash__       # __eq__ above would otherwise unset it
    Tensor.abs_ = P.INPLACE["abs_"]


bind()
