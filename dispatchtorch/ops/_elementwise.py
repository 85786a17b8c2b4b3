"""The elementwise machinery: one executor per arity, shared by every elementwise op.

An `Elementwise` pairs an OpDef (kernel, derivative rule) with a dtype rule. Its
promotion table maps the promoted input dtype to the compute dtype once, so a call
costs a dict lookup, a shape comparison, an allocation and the kernel.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import _dtype as D
from .._run import (any_requires_grad, decompose, execute1, kernel_error, launch, mark_inference,
                    operand_handle,
                    record, resolve, same_place, to_place, wrap)
from .._output_strides import iterator_strides
from .._result_layout import run_in_layout
from .._inplace import (check_no_internal_overlap, check_not_inference, commit_inplace,
                        inplace_needs_graph, self_for_rule)
from .._shape import broadcast_shapes2
from .._tensor import Tensor
from ..autograd.grad_mode import INFERENCE_MADE, INFERENCE_REGIONS, STATE
from ..dispatch import DECOMPOSE, OpDef, register_op
from ._bare_support import (FLOAT8_SCALAR_PATH, float8_binary, refusal as bare_refusal,
                            runs as bare_runs)
from .casts import _cast

_new = object.__new__

# dtypes rule -> the input categories the kernel receives (the prim catalogue's words).
# With promote="int_to_float" an op accepts every category and computes integers and
# bool in the default float dtype; "floating" is "float" for composites.
_CATEGORIES = {"all": {D.BOOL, D.INT, D.FLOAT}, "numeric": {D.INT, D.FLOAT},
               "float": {D.FLOAT}, "integral": {D.BOOL, D.INT},
               "int_float": {D.INT, D.FLOAT}, "floating": {D.FLOAT}, "integer": {D.INT}}
_NOPARAMS = {}
_LOWP = (D.float16, D.bfloat16)
_SPECS: list["Elementwise"] = []
COMPLEX_TO_REAL: dict = {}     # unary op name -> its complex-input form (complex_ops.py)


class Elementwise:
    """A frontend elementwise op. promote: 'default' (PyTorch's result type) or
    'int_to_float' (integers and bool compute in the default float dtype)."""

    __slots__ = ("op", "name", "promote", "dtypes", "out_bool", "table", "kernels", "fresh",
                 "error")

    def __init__(self, op: OpDef, promote=None, dtypes=None, out_bool=False, error=None):
        self.op = op
        self.name = op.name
        self.promote = promote or op.promote
        self.dtypes = dtypes or op.dtypes
        self.out_bool = out_bool
        self.kernels = op.kernels
        self.fresh = op.fresh       # kernel -> its allocating form (Backend.fresh_kernels)
        self.error = error
        self.table = {}
        _SPECS.append(self)
        self.build()

    def build(self):
        # int_to_float: every input category is accepted, integers and bool computing in
        # the default float dtype (the kernel sees floats only)
        allowed = _CATEGORIES["all" if self.promote == "int_to_float" else self.dtypes]
        table = {}
        # float8 of FLOAT8_SCALAR_PATH (mul) is left out: compute_dtype decides per call
        scalar_path = self.name in FLOAT8_SCALAR_PATH
        for d in D.DTYPES:
            if d.category not in allowed or d.bare and (
                    not bare_runs(self.name, d) or scalar_path and d.is_floating_point):
                continue
            c = d
            if self.promote == "int_to_float" and d.category != D.FLOAT:
                c = D.get_default_dtype()
            table[d] = c
        self.table = table

    def compute_dtype(self, dt, b):
        """The compute dtype for a dtype the table lacks, or PyTorch's error: float8 mul
        runs tensor by tensor but not by a CPU scalar; b is the second operand."""
        if dt.bare and dt.is_floating_point and self.name in FLOAT8_SCALAR_PATH and \
                float8_binary(self.name, dt, b):
            return dt
        raise self.dtype_error(dt)

    def dtype_error(self, dt):
        if dt.bare:
            return bare_refusal(self.name, dt)
        if self.error:
            return RuntimeError(self.error)
        # PyTorch raises NotImplementedError when an op has no kernel for a dtype
        return NotImplementedError(f"\"{self.name}\" not implemented for '{dt.pt_name}'")


def rebuild_tables():
    """Called when the default dtype changes (int_to_float ops compute in it)."""
    for spec in _SPECS:
        spec.build()


D.on_default_dtype_change.append(rebuild_tables)


def define(name, *, args=("x",), grad=None, decomp=None, dtypes=None, promote="default",
           out_bool=False, error=None, **row_kwargs):
    """The elementwise family's helper: declare the op's row and its frontend executor.

    A prim's dtypes come from the prim catalogue (backend/prims.py); a composite's
    default to 'all'. row_kwargs: the other row fields (signature, doc, domain,
    forms, save_for, differentiable ...)."""
    op = register_op(OpDef(name, kind="elementwise", args=args, grad=grad, decomp=decomp,
                           dtypes=dtypes, promote=promote, **row_kwargs))
    return Elementwise(op, promote, None, out_bool, error)


# -- promotion helpers ------------------------------------------------------------------

def promote2(a, b):
    """Result dtype of two tensors of different dtypes (0-d ones are weaker)."""
    da, db = a._dtype, b._dtype
    za, zb = not a._shape, not b._shape
    if za == zb:
        return da._promote[db]
    return D.result_type_of(da if zb else db, db if zb else da, None)


def with_scalar(d, v):
    """Result dtype of a tensor of dtype d and a Python scalar (a weak type)."""
    t = type(v)
    if t is float:
        return d if d.category >= D.FLOAT else D.get_default_dtype()
    if t is int:
        return D.int64 if d is D.bool_ else d
    if t is builtins.bool:
        return d
    if isinstance(v, int):  # an int subclass: compile(dynamic=True)'s symbolic size (x / n)
        return D.int64 if d is D.bool_ else d
    if isinstance(v, (np.generic, np.ndarray)) and np.ndim(v) == 0:
        return with_scalar(d, v.item())
    if t is complex:        # a weak complex keeps a float tensor's precision
        return d if d.is_complex else d.to_complex() if d.category == D.FLOAT else \
            D.default_complex_dtype()
    raise TypeError(f"expected a Tensor or a Python number, got {type(v).__name__}")


def result_type(*operands):
    """torch.result_type for any mix of tensors and Python scalars."""
    dim = zero = scal = None
    for x in operands:
        if isinstance(x, Tensor):
            if x._shape:
                dim = x._dtype if dim is None else dim._promote[x._dtype]
            else:
                zero = x._dtype if zero is None else zero._promote[x._dtype]
        else:
            d = D.scalar_dtype(x)
            scal = d if scal is None else scal._promote[d]
    return D.result_type_of(dim, zero, scal)


def _bad_operand(name, x):
    return TypeError(f"{name}(): argument must be a Tensor or a Python number, got "
                     f"{type(x).__name__}")


# -- executors -------------------------------------------------------------------------

def unary(spec, x, keep=True):
    """keep: lay the result out as x is (False once run_in_layout has permuted x)."""
    if not isinstance(x, Tensor):
        raise _bad_operand(spec.name, x)
    dt = x._dtype
    ct = spec.table.get(dt)
    if ct is None:
        if dt.is_complex and spec.name in COMPLEX_TO_REAL:      # abs, angle: complex -> real
            return COMPLEX_TO_REAL[spec.name](x)
        raise spec.dtype_error(dt)
    place = x._place
    op = spec.op
    track = STATE.enabled and x._rg and op.differentiable
    k = spec.kernels.get(place.type)
    if k is None:
        k = resolve(op, place.rt)
    if k is DECOMPOSE or (track and op.grad is None):
        # the decomposition computes in the op's dtype (sigmoid of a bool tensor);
        # float16/bfloat16 compute in float32 and round once, as the prims do
        if ct in _LOWP:
            return decompose(op, (_cast(x, D.float32),), _NOPARAMS).to(ct)
        return decompose(op, (x if dt is ct else _cast(x, ct),), _NOPARAMS)
    shape = x._shape
    if x._stride is not None and keep:      # a view: maybe laid out otherwise (TensorIterator)
        st = iterator_strides(shape, ((shape, x._stride),))
        if st is not None:
            return run_in_layout(lambda v: unary(spec, v, False), (x,), shape, st)
    od = D.bool_ if spec.out_bool else ct
    if dt is ct:
        h = x._h
        fresh = spec.fresh.get(k) if shape else None
    else:
        h = operand_handle(x, ct, shape, place)
        fresh = None
    # the unary specialisation of _run.execute1 (the hottest path: no argument tuples)
    try:        # allocation inside: out of device memory names the op
        if fresh is None:
            out = place.empty(shape, od.name, place.index)
            k(out, h)
        else:       # the backend's kernel allocates its result (0.13 us less)
            out = fresh(h)
    except Exception as exc:
        raise kernel_error(spec.name, place.type, (ct,), exc) from exc
    r = wrap(out, shape, od, place)
    if track and od.is_grad:
        record(op, (x,), _NOPARAMS, (r,))
    return r


def binary(spec, a, b, keep=True):
    """keep: lay the result out as the operands are (False once run_in_layout permuted them)."""
    ta = type(a) is Tensor or isinstance(a, Tensor)     # the exact type first: cheaper
    tb = type(b) is Tensor or isinstance(b, Tensor)
    if ta:
        place = a._place
        sa = a._shape
        if tb:
            da, db = a._dtype, b._dtype
            dt = da if da is db else promote2(a, b)
            if b._place is not place:
                place = same_place(spec.name, (a, b))
                a, b = to_place(a, place), to_place(b, place)
            sb = b._shape
            track = STATE.enabled and (a._rg or b._rg)
        else:
            dt = with_scalar(a._dtype, b)
            sb = ()
            track = STATE.enabled and a._rg
    elif tb:
        place = b._place
        sa = ()
        sb = b._shape
        dt = with_scalar(b._dtype, a)
        track = STATE.enabled and b._rg
    else:
        raise _bad_operand(spec.name, a)
    ct = spec.table.get(dt)
    if ct is None:
        ct = spec.compute_dtype(dt, b)
    op = spec.op
    track = track and op.differentiable
    k = spec.kernels.get(place.type)
    if k is None:
        k = resolve(op, place.rt)
    if k is DECOMPOSE or (track and op.grad is None):
        # the decomposition computes in ct, as a kernel would (float16 / bfloat16 in
        # float32, rounded once); the shapes are checked under this op's name first
        if sa != sb:
            broadcast_shapes2(sa, sb, spec.name)
        wide = D.float32 if ct in _LOWP else ct
        a = _cast(a, wide) if ta and a._dtype is not wide else a
        b = _cast(b, wide) if tb and b._dtype is not wide else b
        r = decompose(op, (a, b), _NOPARAMS)
        return r if wide is ct or r._dtype is not wide else r.to(ct)
    if (ta and a._stride is not None or tb and b._stride is not None) and keep:
        st = _binary_layout(spec, a, b, ta, tb, sa, sb)
        if st is not None:
            return run_in_layout(lambda x, y: binary(spec, x, y, False), (a, b), st[0], st[1])
    fresh = None
    if sa == sb:                    # the usual case: one shape comparison, not three
        shape = sa
        if ta and tb and a._dtype is ct and b._dtype is ct:
            ha, hb = a._h, b._h
            if shape:               # operands ready as they are: the kernel may allocate
                fresh = spec.fresh.get(k)
        else:
            ha = a._h if ta and a._dtype is ct else operand_handle(a, ct, shape, place)
            hb = b._h if tb and b._dtype is ct else operand_handle(b, ct, shape, place)
    else:
        shape = broadcast_shapes2(sa, sb, spec.name)
        ha = a._h if ta and sa == shape and a._dtype is ct else operand_handle(a, ct, shape, place)
        hb = b._h if tb and sb == shape and b._dtype is ct else operand_handle(b, ct, shape, place)
    od = D.bool_ if spec.out_bool else ct
    # the binary specialisation of _run.execute1
    try:
        if fresh is None:
            out = place.empty(shape, od.name, place.index)
            k(out, ha, hb)
        else:       # the backend's kernel allocates its result (0.13 us less)
            out = fresh(ha, hb)
    except Exception as exc:
        raise kernel_error(spec.name, place.type, (ct,), exc) from exc
    r = _new(Tensor)                # _run.wrap inline: one Python call less per op
    r._h = out
    r._shape = shape
    r._dtype = od
    r._place = place
    r._stride = None
    if INFERENCE_REGIONS[0] and STATE.inference:
        mark_inference(r)
    if track and od.is_grad:
        record(op, (a, b), _NOPARAMS, (r,))
    return r


def _binary_layout(spec, a, b, ta, tb, sa, sb):
    """(shape, strides) of a binary result laid out otherwise than C-contiguous, or None."""
    shape = sa if sa == sb else broadcast_shapes2(sa, sb, spec.name)
    st = iterator_strides(shape, ((sa, a.stride()) if ta else ((), ()),
                                  (sb, b.stride()) if tb else ((), ())))
    return None if st is None else (shape, st)


def nary(spec, operands, out_dtype=None, params=_NOPARAMS, compute=None, keep=True):
    """The general executor (where, lerp-like ops): operands are tensors or scalars,
    all promoted together unless `compute` gives per-operand dtypes. keep: lay the
    result out as the operands are (False once run_in_layout has permuted them)."""
    tensors = [x for x in operands if isinstance(x, Tensor)]
    if not tensors:
        raise _bad_operand(spec.name, operands[0])
    place = same_place(spec.name, tensors)
    operands = [to_place(x, place) if isinstance(x, Tensor) else x for x in operands]
    if compute is None:
        dt = result_type(*operands)
        ct = spec.table.get(dt)
        if ct is None:
            raise spec.dtype_error(dt)
        compute = (ct,) * len(operands)
    od = out_dtype or (D.bool_ if spec.out_bool else compute[-1])
    op = spec.op
    track = STATE.enabled and op.differentiable and any(x._rg for x in operands
                                                           if isinstance(x, Tensor))
    k = spec.kernels.get(place.type)
    if k is None:
        k = resolve(op, place.rt)
    if k is DECOMPOSE or (track and op.grad is None):
        low = compute[-1] if compute[-1] in _LOWP else None
        if low is None:
            return decompose(op, tuple(operands), params)
        # float16 / bfloat16: the decomposition computes in float32, rounded once
        wide = tuple(_cast(x, D.float32) if isinstance(x, Tensor) and x._dtype is low else x
                     for x in operands)
        return decompose(op, wide, params).to(low)
    shape = ()
    laid = False
    for x in operands:
        if isinstance(x, Tensor):
            shape = broadcast_shapes2(shape, x._shape, spec.name)
            laid = laid or x._stride is not None
    if keep and laid:
        st = iterator_strides(shape, [(x._shape, x.stride()) if isinstance(x, Tensor) else ((), ())
                                      for x in operands])
        if st is not None:
            return run_in_layout(lambda *xs: nary(spec, xs, out_dtype, params, compute, False),
                                 operands, shape, st)
    handles = [operand_handle(x, c, shape, place) for x, c in zip(operands, compute)]
    return execute1(op, k, place, shape, od, handles, compute, params,
                    tuple(operands) if track else None, params)


# -- in place ----------------------------------------------------------------------------

can_cast = D.can_cast       # PyTorch's canCast (in _dtype: ops/_out.py needs it too)


def check_inplace_target(name, self, result_dtype, shape):
    if not can_cast(result_dtype, self._dtype):
        raise RuntimeError(f"{name}: result type {result_dtype.pt_name} can't be cast to the "
                           f"desired output type {self._dtype.pt_name}")
    if shape != self._shape:
        raise RuntimeError(f"{name}: output with shape {list(self._shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")


def inplace(spec, self, *others):
    """self = op(self, *others), written into self's memory."""
    if not isinstance(self, Tensor):
        raise _bad_operand(spec.name + "_", self)
    if INFERENCE_MADE[0]:
        check_not_inference(self)
    if self._stride is not None:
        check_no_internal_overlap(self, spec.name + "_")
    place = self._place
    if len(others) == 1 and (not STATE.enabled or not (self._rg or any_requires_grad(others))):
        other = others[0] if len(others) == 1 else None
        # the common case (optimizer updates, grad accumulation): same dtype, shape, device
        if type(other) is Tensor and other._dtype is self._dtype and other._shape == self._shape \
                and other._place is place and self._dtype in spec.table \
                and spec.table[self._dtype] is self._dtype and not spec.out_bool:
            k = spec.kernels.get(place.type)
            if k is None:
                k = resolve(spec.op, place.rt)
            if k is not DECOMPOSE and _no_overlap(self, others):
                try:        # _run.launch, specialised (optimizer updates run this)
                    k(self._h, self._h, other._h)
                except Exception as exc:
                    raise kernel_error(spec.name + "_", place.type, (self._dtype,), exc) from exc
                v = self._vcount
                if v is None:
                    self._vcount = [1]
                else:
                    v[0] += 1
                return self
    operands = (self, *others)
    if inplace_needs_graph(spec.name + "_", operands):
        fn = {1: unary, 2: binary}.get(len(operands))
        old = self_for_rule(spec.op, self)
        r = fn(spec, old, *others) if fn else nary(spec, (old, *others))
        check_inplace_target(spec.name + "_", self, r._dtype, r._shape)
        return commit_inplace(self, r)
    if len(operands) == 1:
        dt = self._dtype
        shape = self._shape
    else:
        dt = result_type(*operands)
        shape = self._shape
        for x in others:
            if isinstance(x, Tensor):
                if x._place is not place and x._shape:
                    same_place(spec.name + "_", operands)
                shape = broadcast_shapes2(shape, x._shape, spec.name + "_")
    ct = spec.table.get(dt)
    if ct is None:
        if not others:
            raise spec.dtype_error(dt)
        ct = spec.compute_dtype(dt, others[-1])
    od = D.bool_ if spec.out_bool else ct
    check_inplace_target(spec.name + "_", self, od, shape)
    k = spec.kernels.get(place.type)
    if k is None:
        k = resolve(spec.op, place.rt)
    direct = od is self._dtype and k is not DECOMPOSE and _no_overlap(self, others)
    if not direct:
        fn = {1: unary, 2: binary}.get(len(operands))
        r = fn(spec, *operands) if fn else nary(spec, operands)
        place.bk.copy_(self._h, r._h)
    else:
        handles = [operand_handle(x, ct, shape, place) for x in operands]
        launch(spec.op, k, place, (self._h, *handles), None, (ct,), spec.name + "_")
    self._vc()[0] += 1
    return self


def _no_overlap(self, others):
    """Writing self while reading others is safe: each other either is self's exact
    layout or lives in another storage."""
    storage = self._whole_storage()
    for x in others:
        if isinstance(x, Tensor):
            xs = x._whole_storage()
            if xs is storage and (x._offset != self._offset or x._stride != self._stride
                                  or x._shape != self._shape):
                return False
    return True
