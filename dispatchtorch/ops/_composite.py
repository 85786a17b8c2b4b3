"""Helpers shared by composite ops: their schema rows, and in-place forms made from
function forms.

A composite is defined by a decomposition into public ops. With a derivative rule of
its own, the decomposition runs without recording and backward sees one node.
"""
from __future__ import annotations

from .. import _dtype as D
from .._inplace import check_no_internal_overlap, commit_inplace, inplace_needs_graph
from .._run import decompose
from .._tensor import Tensor
from ..dispatch import OpDef, register_op
from ._elementwise import check_inplace_target


# rows whose decomposition computes float16 / bfloat16 inputs in float32 and rounds the
# result once (PyTorch's "opmath"), instead of rounding after every step
OPMATH: set = set()
_LOWP = (D.float16, D.bfloat16)


def composite(name, decomp, *, kind, args=("x",), grad=None, opmath=False, **row_kwargs):
    """The composite family's helper: declare the op's row (a decomposition into public
    ops, optionally a derivative rule of its own). row_kwargs: the other row fields
    (n_out, dtypes, promote, signature, doc, differentiable, save_for, meta, domain,
    forms)."""
    if opmath:
        OPMATH.add(name)
    return register_op(OpDef(name, kind=kind, args=args, decomp=decomp, grad=grad, **row_kwargs))


def run(op, inputs, params):
    """Call a composite: its decomposition, recorded as one node if it has a rule."""
    if op.name in OPMATH:
        low = next((x._dtype for x in inputs if isinstance(x, Tensor) and x._dtype in _LOWP),
                   None)
        if low is not None:
            wide = tuple(x.float() if isinstance(x, Tensor) and x._dtype is low else x
                         for x in inputs)
            return _narrow(decompose(op, wide, params), low)
    return decompose(op, inputs, params)


def _narrow(r, low):
    if isinstance(r, tuple):
        return type(r)(*(_narrow(x, low) for x in r)) if hasattr(r, "_fields") else \
            tuple(_narrow(x, low) for x in r)
    if isinstance(r, Tensor) and r._dtype is D.float32:
        return r.to(low)
    return r


def written_forms(namespace):
    """The public forms of the rows a module declares with hand-written functions
    (Forms(written=True), attached with `form_of`): ({name or alias: function},
    {name_ or alias_: in-place form}). A row with Forms.inplace whose `_` form is not
    attached gets `inplace_variant` of its function. namespace: the module's `vars()`."""
    functions, inplace = {}, {}
    module = namespace["__name__"]
    for op in namespace.values():
        if not isinstance(op, OpDef) or op.forms is None or not op.forms.written \
                or op.function is None or op.function.__module__ != module:
            continue
        if op.forms.inplace and op.inplace_function is None:
            op.inplace_function = inplace_variant(op.function, op.name + "_")
        for n in (op.name,) + op.forms.aliases:
            functions[n] = op.function
            if op.forms.inplace:
                inplace[n + "_"] = op.inplace_function
    return functions, inplace


def inplace_variant(fn, name, overlap_ok=False):
    """`self.op_(...)` for an op without an in-place kernel: computed out of place and
    written into self under PyTorch's rules (the result must fit self's dtype and
    shape; a leaf that requires grad refuses; an expanded self refuses unless
    overlap_ok, as PyTorch's index_fill_). Under autograd the op reads a copy of
    self, so a rule that saved self is not tripped by the write."""
    def method(self, *args, **kwargs):
        if not isinstance(self, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(self).__name__}")
        if not overlap_ok:
            check_no_internal_overlap(self, name)
        if inplace_needs_graph(name, (self, *args, *kwargs.values())):
            r = fn(self.clone(), *args, **kwargs)
        else:
            r = fn(self, *args, **kwargs)
        check_inplace_target(name, self, r._dtype, r._shape)
        if r._dtype is not self._dtype:
            r = r.to(self._dtype)
        return commit_inplace(self, r)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of {fn.__name__} (writes into self)."
    return method
