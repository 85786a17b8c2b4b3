"""The nn family's helper: `Composite`, a callable row with a fused-kernel convention
(see the package docstring), and the half-precision rounding its calls share."""
from __future__ import annotations

from ... import _dtype as D
from ..._run import apply, decompose, resolve, same_place, to_place
from ..._tensor import Tensor
from ...autograd.grad_mode import STATE
from ...dispatch import DECOMPOSE, OpDef, register_op


class Composite:
    """A callable row: `ROW(*inputs, **params)` runs the backend's own kernel where
    it registered one (and autograd allows it), the decomposition otherwise."""

    __slots__ = ("op", "meta", "kernels", "check")

    def __init__(self, name, args, decomp, grad=None, meta=None, signature="", doc="",
                 save_for=None, check=None):
        # meta: the row's shape rule, meta(*inputs, **params) -> ((shape, dtype), ...)
        self.op = register_op(OpDef(name, kind="nn", args=args, decomp=decomp, grad=grad,
                                    meta=meta, signature=signature, doc=doc, save_for=save_for))
        self.meta = meta
        self.kernels = self.op.kernels
        # check(name, *inputs, **params) -> params: the row's argument checks and
        # normalisation, run before any kernel (one place for every caller)
        self.check = check

    def __call__(self, *inputs, **params):
        if self.check is not None:
            params = self.check(self.op.name, *inputs, **params)
        place = None
        for x in inputs:
            if isinstance(x, Tensor):
                if place is None:
                    place = x._place
                elif x._place is not place:
                    # PyTorch's RuntimeError for a mix (a 0-d cpu tensor joins the others)
                    place = same_place(self.op.name, inputs)
                    inputs = tuple(to_place(t, place) if isinstance(t, Tensor) else t
                                   for t in inputs)
                    break
        k = self.kernels.get(place.type)
        if k is None:
            k = resolve(self.op, place.rt)
        low = _half(inputs)
        if k is not DECOMPOSE and (low is None or not _tracked(inputs)) and \
                (self.check is None or inputs[0].numel()):
            # rows with checks give an empty input to their decomposition: kernels never
            # see one
            return self._kernel(place, inputs, params)
        if low is not None:
            # float16/bfloat16 compute in float32 and round once, as the prims do (a
            # fused kernel doing the same then matches the decomposition); recorded on
            # the float32 inputs, the derivative rule runs in float32 too
            up = tuple(x.float() if isinstance(x, Tensor) and x._dtype is low else x
                       for x in inputs)
            return _round_to(decompose(self.op, up, params), low)
        return decompose(self.op, inputs, params)

    def _kernel(self, place, inputs, params):
        op = self.op
        if op.grad is None and _tracked(inputs):
            return decompose(op, inputs, params)     # a kernel is opaque to autograd
        handles = tuple(x._h if isinstance(x, Tensor) else x for x in inputs)
        kparams = {k: (v._h if isinstance(v, Tensor) else v) for k, v in params.items()}
        return apply(op, place, inputs, handles, self.meta(*inputs, **params), kparams, params)


def _half(inputs):
    """The half-precision dtype of the first floating input, if it is one."""
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype.is_floating_point:
            return x._dtype if x._dtype in (D.float16, D.bfloat16) else None
    return None


def _tracked(inputs):
    return STATE.enabled and any(isinstance(x, Tensor) and x._rg for x in inputs)


def _round_to(r, dt):
    if isinstance(r, Tensor):
        return r.to(dt) if r._dtype is D.float32 else r
    return type(r)(_round_to(x, dt) for x in r) if isinstance(r, tuple) else r


def _same(x, **_):
    return ((x._shape, x._dtype),)
