"""The `out=` argument: one check and one write for every op that takes it.

PyTorch checks an `out=` tensor before it writes into it (TensorIterator, structured
kernels, `torch._refs`' out_wrapper); the checks are the same whatever the op, so they
live here once and each op says only which dtype rule and which aliasing rule it has:

- `out` must be a Tensor (a tuple of them for ops with several results), on the
  result's device (RuntimeError "Expected out tensor to have device ...");
- dtype: "exact" (gather, take, index_select, masked_select, sort, kthvalue, amax, ...:
  "Expected out tensor to have dtype float, but got double instead"), "safe" (the
  elementwise ops: PyTorch's canCast, "result type Float can't be cast to the desired
  output type Long"), "inputs" (cat, stack: canCast again, but a TypeError as PyTorch's
  cat raises), or "cast" (reductions whose out dtype is the compute dtype: the result
  is converted);
- memory: an expanded `out` (elements sharing memory) raises; so does an `out` that
  shares memory with an input: partly ("partial", TensorIterator's rule: the very same
  tensor is allowed) or at all ("any", the indexing ops, cat, kthvalue).

- autograd: in grad mode a result that requires grad (an input does), or an `out` that
  requires grad, raises PyTorch's "functions with out=... arguments don't support
  automatic differentiation" (the result would silently have no graph);

Every tensor is left as it was when a check fails. A wrong-shaped `out` is resized to
the result's shape, as PyTorch's resize_output does.
"""
from __future__ import annotations

import functools
import inspect
import sys

from .. import _dtype as D
from .._inplace import check_no_internal_overlap
from .._run import storage_of, strides_of
from .._tensor import Tensor
from ..autograd.grad_mode import STATE

_ALIAS_MSG = ("unsupported operation: some elements of the input tensor and the written-to "
              "tensor refer to a single memory location. Please clone() the tensor before "
              "performing the operation.")


def _dense(shape, stride):
    """Whether the elements fill a block of memory exactly once, in some dim order."""
    expected = 1
    for st, n in sorted((st, n) for n, st in zip(shape, stride) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def overlap(a, b):
    """How a and b share memory, as PyTorch's get_overlap_status decides it: None, "full"
    (the same elements in the same geometry) or "partial". Where either is not dense
    (PyTorch's "too hard" case) it is not decided, so not refused: None."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or storage_of(a) is not storage_of(b):
        return None
    if 0 in a._shape or 0 in b._shape:
        return None
    sa, sb = strides_of(a), strides_of(b)
    if not (_dense(a._shape, sa) and _dense(b._shape, sb)):
        return None
    lo_a, lo_b = a._offset, b._offset
    hi_a = lo_a + sum((n - 1) * s for n, s in zip(a._shape, sa))
    hi_b = lo_b + sum((n - 1) * s for n, s in zip(b._shape, sb))
    if lo_a == lo_b and hi_a == hi_b:
        return "full" if sa == sb else "partial"
    return "partial" if lo_a <= hi_b and lo_b <= hi_a else None


_HELPERS = frozenset({"check_out", "write_out", "wrapper", "_write", "_out", "_assign"})


def _caller():
    """The op whose out= failed, for the message, when the op did not say (error path only)."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name in _HELPERS:
        f = f.f_back
    return f.f_code.co_name if f is not None else "out="


def check_out(op, out, result, inputs=(), dtype="safe", alias="partial"):
    """Raise as PyTorch does when `out` cannot receive `result` (see the module doc)."""
    try:
        _check(op, out, result, inputs, dtype, alias)
    except (TypeError, RuntimeError) as exc:
        if op != "out=":
            raise
        raise type(exc)(str(exc).replace("out=", _caller(), 1)) from None


def _check(op, out, result, inputs, dtype, alias):
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._place is not result._place and out.device != result.device:
        raise RuntimeError(f"{op}: Expected out tensor to have device {result.device}, but got "
                           f"{out.device} instead")
    rd, od = result._dtype, out._dtype
    if rd is not od:
        if dtype == "exact":
            raise RuntimeError(f"{op}: Expected out tensor to have dtype {_cpp_name(rd)}, "
                               f"but got {_cpp_name(od)} instead")
        if dtype == "safe" and not D.can_cast(rd, od):
            raise RuntimeError(f"{op}: result type {rd.pt_name} can't be cast to the desired "
                               f"output type {od.pt_name}")
        if dtype == "inputs" and not D.can_cast(rd, od):
            raise TypeError(f"{op}(): input types can't be cast to the desired output type "
                            f"{od.pt_name}")
    check_no_internal_overlap(out, op)
    for x in inputs:
        for t in (x if isinstance(x, (list, tuple)) else (x,)):
            status = overlap(out, t)
            if status == "partial" or status == "full" and alias == "any":
                raise RuntimeError(f"{op}: {_ALIAS_MSG}")


# the C++ type names PyTorch's exact-dtype message prints (caffe2::TypeMeta::name)
_CPP_NAMES = {"int64": "long int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _cpp_name(dt):
    return _CPP_NAMES.get(dt.name, dt.pt_name.lower())


def _assign(out, r):
    if out._shape == r._shape and out._dtype is r._dtype:
        return out.copy_(r)
    out.data = r.to(out.dtype) if out._dtype is not r._dtype else r
    return out


def write_out(out, r, op="out=", inputs=(), dtype="safe", alias="partial"):
    """Honour an `out=` argument: check it, then write r into it (resized if its shape
    differs). r may be a tuple (or named tuple) of results, out then a tuple as long."""
    if out is None:
        return r
    if STATE.enabled:
        _check_no_autograd(op, out, r)
    if isinstance(r, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(r):
            raise TypeError(f"{op}(): argument 'out' must be tuple of {len(r)} Tensors, not "
                            f"{type(out).__name__}")
        for o, x in zip(out, r):
            check_out(op, o, x, inputs, dtype, alias)
        outs = [_assign(o, x) for o, x in zip(out, r)]
        return type(r)(*outs) if hasattr(r, "_fields") else tuple(outs)
    check_out(op, out, r, inputs, dtype, alias)
    return _assign(out, r)



def _check_no_autograd(op, out, r):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    results = r if isinstance(r, tuple) else (r,)
    if any(isinstance(x, Tensor) and x._rg for x in (*results, *outs)):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")


def _tensor_args(args, kwargs):
    return [a for a in (*args, *kwargs.values()) if isinstance(a, (Tensor, list, tuple))]


def _with_out(sig):
    """fn's signature with the keyword-only `out=None` the wrapper takes (so that
    inspect.signature, and the sweep of tests/opinfo, see it)."""
    params = list(sig.parameters.values())
    if "out" in sig.parameters:
        return sig
    at = len(params) - (params and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return sig.replace(parameters=params)


def check_tensor_list(value, op, arg, position, element_arg, op_in_element=False):
    """A `Tensor[]` argument as PyTorch's parser checks it: a list or tuple of tensors.
    position: the argument's in the type message (None: unnamed, as for out=);
    element_arg: the index the element message names (PyTorch's own numbering)."""
    if not isinstance(value, (list, tuple)):
        at = "" if position is None else f" (position {position})"
        raise TypeError(f"{op}(): argument '{arg}'{at} must be tuple of Tensors, not "
                        f"{type(value).__name__}")
    for i, o in enumerate(value):
        if not isinstance(o, Tensor):
            raise TypeError(f"{op + '(): ' if op_in_element else ''}expected Tensor as element "
                            f"{i} in argument {element_arg}, but got {type(o).__name__}")


def check_out_list(op, out, position):
    """A `Tensor(a!)[] out` as PyTorch's argument parser checks it, before the op runs."""
    check_tensor_list(out, op, "out", None, position)


def takes_out(op, dtype="safe", alias="partial", factory=False, out_list=None):
    """Decorator: the op's `out=` is checked and written by write_out (the function
    itself computes out of place and never sees it). factory: a creation op, whose
    result takes out's dtype and device when none is given (PyTorch infers them from out).
    out_list: (ATen's out overload name, out's schema position) for an op returning a
    list of tensors: PyTorch's `Tensor[] out` variant returns None and names that overload
    when out's length is wrong."""
    def deco(fn):
        names = inspect.signature(fn).parameters
        with_dtype = factory and "dtype" in names
        with_device = factory and "device" in names

        @functools.wraps(fn)
        def wrapper(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            if with_dtype and kwargs.get("dtype") is None and isinstance(out, Tensor):
                kwargs["dtype"] = out._dtype
            if with_device and kwargs.get("device") is None and isinstance(out, Tensor):
                kwargs["device"] = out.device
            if out_list is not None:
                check_out_list(op, out, out_list[1])
            r = fn(*args, **kwargs)
            if out_list is not None:
                if len(out) != len(r):
                    raise RuntimeError(f"{out_list[0]} expected an out= argument of size "
                                       f"{len(r)}, got size {len(out)}")
                write_out(out, r, op, _tensor_args(args, kwargs), dtype, alias)
                return None
            return write_out(out, r, op, () if factory else _tensor_args(args, kwargs), dtype,
                             alias)
        wrapper.__signature__ = _with_out(inspect.signature(fn))
        # the frame carries the op's name (tracebacks, and the compile tracer naming the op
        # that broke a graph read it from the code object)
        wrapper.__code__ = wrapper.__code__.replace(co_name=fn.__name__,
                                                    co_qualname=fn.__qualname__)
        return wrapper
    return deco
