"""Autograd for in-place ops: leaf checks, version bumps and history rewriting.

An in-place op under autograd runs as its functional form, then writes the result
into self's memory and moves self's history to the new node. When self is a view,
its base's history becomes "base with this region replaced" (PyTorch's
CopySlices), so gradients reach everything that shares the memory.
"""
from __future__ import annotations

from ._run import make_view, record, record_view, strides_of
from ._shape import contiguous_strides
from ._tensor import Tensor
from .autograd.grad_mode import INFERENCE_MADE, STATE
from .dispatch import OPS
from .dispatch.registry import IN


def check_not_inference(self):
    """PyTorch refuses an in-place write into an inference tensor outside inference mode
    (callers test INFERENCE_MADE[0] first: no inference tensor, nothing to check)."""
    if not STATE.inference and self.is_inference():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


def check_no_internal_overlap(self, name):
    """PyTorch refuses an in-place write into memory that several elements share (an
    expanded tensor): the result would depend on the write order. Cheap when contiguous."""
    st = self._stride
    if st is not None and 0 in st:
        for n, s in zip(self._shape, st):
            if s == 0 and n > 1:
                raise RuntimeError(f"{name}: unsupported operation: more than one element of the "
                                   f"written-to tensor refers to a single memory location. "
                                   f"Please clone() the tensor before performing the operation.")


def inplace_needs_graph(name, operands):
    """Whether an in-place op on operands[0] must be recorded; raises where PyTorch does."""
    if not STATE.enabled:
        return False
    self = operands[0]
    if self._rg and self._grad_fn is None:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                           f"in-place operation.")
    base = self._base
    if base is not None and base._rg and base._grad_fn is None:
        raise RuntimeError(f"{name}: a view of a leaf Variable that requires grad is being used in "
                           f"an in-place operation.")
    if self._rg:
        return True
    for x in operands[1:]:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def self_for_rule(op, self):
    """The tensor the functional op should read as `self`: a copy when the derivative
    rule saves it, since the in-place write is about to overwrite it."""
    for kind, key in op.getters:
        if kind == IN and key == 0:
            return self.clone()
    return self


def commit_inplace(self, r, replaces=False):
    """Write r into self and give self r's history. Returns self.

    The history is PyTorch's: the overwritten region stops depending on self's old
    value unless r does (r computed from self, as by add_), and its gradient flows to r.
    replaces: r ignores self's old value (copy_), whose history then gets zeros, as
    from PyTorch's CopyBackwards, even when r requires grad."""
    if INFERENCE_MADE[0]:
        check_not_inference(self)
    self._place.bk.copy_(self._h, r._h)
    vc = self._vc()
    vc[0] += 1
    base = self._base
    if base is None and self._rg and (replaces or not r._rg):
        # self is all overwritten by a value that is not computed from it: the old
        # history gets a zero gradient (PyTorch keeps requires_grad and gives zeros)
        if r._rg:
            record(OPS["as_strided_scatter"], (self, r), {
                "size": self._shape, "stride": contiguous_strides(self._shape),
                "storage_offset": 0}, (self,))
        else:
            record(OPS["fill"], (self,), {}, (self,))
        return self
    if not r._rg:
        if base is None or not base._rg:
            return self
        # a view written with a value that needs no grad: as_strided_scatter below gives
        # the region no edge, so the overwritten part of base's history gets none
    elif r._grad_fn is None:
        # r is a leaf (copy_ of a tensor that requires grad): self's history must lead to
        # it, so take it through an identity view (no copy), recorded as `view` records it
        leaf = r
        r = make_view(leaf, leaf._shape, strides_of(leaf), leaf._offset)
        record(OPS["view"], (leaf,), {"input_shape": leaf._shape}, (r,))
    if base is None:
        self._grad_fn, self._out_nr, self._rg = r._grad_fn, r._out_nr, True
        return self
    params = {"size": self._shape, "stride": strides_of(self), "storage_offset": self._offset}
    # base's new value is "old base with self's region replaced by r"
    record(OPS["as_strided_scatter"], (base, r), params, (base,))
    base._rg = True
    self._view_vc = vc[0]
    record_view(base, self)
    return self


def bump(self):
    """An in-place write outside autograd (no_grad, or nothing requires grad)."""
    self._vc()[0] += 1
    return self
