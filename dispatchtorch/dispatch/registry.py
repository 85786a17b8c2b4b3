"""The op registry: one OpDef per op, declared once by the ops layer."""
from __future__ import annotations

import inspect

from ..backend.prims import PRIMS


class _Decompose:
    """Marker in a kernel cache: run the op's decomposition on this backend."""

    def __repr__(self):
        return "DECOMPOSE"


DECOMPOSE = _Decompose()


class OpDef:
    """The schema row of one op.

    `kernels` caches, per backend name, what a call runs there: the backend's
    kernel, a CPU fallback wrapper, or DECOMPOSE. It is filled on first use, so
    the per-call cost is one dict lookup.
    """

    __slots__ = ("name", "prim", "kind", "n_out", "dtypes", "differentiable", "grad",
                 "grad_args", "getters", "save_masks", "args", "decomp", "signature", "doc",
                 "kernels", "data_dependent", "tolerance")

    def __init__(self, name, *, kind, args=("x",), prim=None, n_out=1, dtypes="all", grad=None,
                 decomp=None, signature="", doc="", differentiable=None,
                 data_dependent=False, tolerance=None, save_for=None):
        self.name = name
        self.prim = (name in PRIMS) if prim is None else prim
        if self.prim and name not in PRIMS:
            raise ValueError(f"op {name!r} is declared a prim but is not in the prim catalogue")
        if not self.prim and decomp is None and kind not in FRONTEND_KINDS:
            raise ValueError(f"composite op {name!r} needs a decomposition")
        self.args = tuple(args)
        self.kind = kind
        self.n_out = n_out
        self.dtypes = dtypes
        self.grad = grad
        # A derivative rule names what it needs (inputs, `result`, params) by its
        # argument names; read once here so a call saves only those.
        self.grad_args = tuple(inspect.signature(grad).parameters)[1:] if grad else ()
        self.getters = tuple(_getter(a, self.args) for a in self.grad_args)
        # save_for: {input name: names of the inputs whose gradient needs it}. An input is
        # saved only if one of those requires grad (mul keeps `a` only for b's gradient).
        save_for = save_for or {}
        self.save_masks = tuple(
            tuple(self.args.index(n) for n in save_for[a]) if a in save_for else None
            for a in self.grad_args)
        self.differentiable = (grad is not None or decomp is not None) if differentiable is None \
            else differentiable
        self.decomp = decomp
        self.signature = signature or (PRIMS[name].signature if self.prim else "")
        self.doc = doc or (PRIMS[name].doc if self.prim else "")
        self.kernels = {}
        self.data_dependent = data_dependent
        self.tolerance = tolerance

    def __repr__(self):
        return f"<op {self.name} ({'prim' if self.prim else 'composite'})>"


def grad_not_implemented(name):
    """The derivative rule of an op PyTorch records but cannot differentiate
    (floor_divide): its float outputs require grad, and backward through it raises."""
    def rule(g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return rule


# Ops the frontend carries out with the memory methods alone (views, copies,
# factories): no kernel table entry, no decomposition.
FRONTEND_KINDS = frozenset({"view", "memory", "factory"})

# What a derivative rule's argument name refers to.
IN, PARAM, OUT, NEEDS = 0, 1, 2, 3


def _getter(name, args):
    if name in args:
        return (IN, args.index(name))
    if name == "result":
        return (OUT, 0)
    if name.startswith("result") and name[6:].isdigit():
        return (OUT, int(name[6:]))
    if name == "needs":
        return (NEEDS, None)
    return (PARAM, name)


OPS: dict[str, OpDef] = {}


def register_op(op: OpDef) -> OpDef:
    if op.name in OPS:
        raise ValueError(f"op {op.name!r} is declared twice")
    OPS[op.name] = op
    return op
