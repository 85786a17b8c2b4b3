"""The op registry: one row (`OpDef`) per op, declared once by the ops layer.

A row is the single source of truth for an op: its name, signature, dtype rule,
shape (meta) rule, derivative, prim-or-decomposition, public forms, sample domain
and one-line doc. Everything else (module functions, Tensor methods, __all__,
docs/ops.md, the default samples of the unit tests and the conformance suite, the
coverage maps) is derived from the rows. A prim's kernel facts (dtypes the kernel
receives, kernel signature, semantics) are declared once, in backend/prims.py (a
backend imports it without numpy); a prim row reads them from there.

The family helpers that make rows (the only callers of `register_op`):
`ops._elementwise.define` (unary / binary / n-ary elementwise), `ops._composite.composite`
(any composite: a decomposition into public ops), `ops.reduction_prims.reduction_row`,
`ops.scans.scan_row`, `ops.nn_ops`'s `Composite` (nn rows with a fused-kernel
convention), and here `prim_row` (the prims whose executor is written per op: gather /
scatter, sort, FFT, linalg) and `frontend_row` (views, memory ops and factories, which
the frontend carries out with the backend's memory methods alone).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..backend.prims import PRIMS


class _Decompose:
    """Marker in a kernel cache: run the op's decomposition on this backend."""

    def __repr__(self):
        return "DECOMPOSE"


DECOMPOSE = _Decompose()


@dataclass(frozen=True)
class Forms:
    """The public forms made from a row (PyTorch's names): the function
    `torch.<name>(..., out=None)` and the method `Tensor.<name>` always; inplace: the
    `_` form too (function and method); aliases: other names of every form (arctan2 for
    atan2); scalars: which operands of a binary function form may be Python numbers
    ('both', 'other', 'none'); special: the function's names in `torch.special` (a row
    named `special_<x>` is torch.special's only, as in native_functions.yaml: it is
    `torch.special.<x>`, with no `torch.*` function and no method); written: the module
    writes the function form by hand (it takes arguments of its own) and attaches it to
    the row with `form_of`, the aliases naming that function.
    """
    inplace: bool = True
    aliases: tuple = ()
    scalars: str = "both"
    special: tuple = ()
    written: bool = False


NO_FORMS = None      # a row whose public forms are written by hand in its module


@dataclass(eq=False, slots=True)
class OpDef:
    """The row of one op.

    dtypes: the dtype rule, a category of input dtypes ('all', 'numeric', 'float',
    'floating', 'integral', 'integer', 'int_float'); for a prim it is the prim
    catalogue's (stated there once). promote: 'default' (PyTorch's result type) or
    'int_to_float' (integers and bool compute in the default float dtype).
    meta: the shape rule, `meta(*inputs, **params) -> ((shape, dtype), ...)`, for the
    families whose output geometry is not simply the broadcast of the inputs.
    domain: the sample domain (low, high) of the random values where the op and its
    gradient are finite, for every operand, or one (low, high) per operand where they
    differ (pow's base and exponent); tests/ops and the conformance suite both read it
    (`operand_domains`).
    forms: the public forms made from the row (None: written by hand).
    function, inplace_function: the row's public function form and its `_` form, set
    when its forms are made (or by `form_of` for written ones); torch.special and the
    Tensor methods read them.
    `kernels` caches, per backend name, what a call runs there: the backend's
    kernel, a CPU fallback wrapper, or DECOMPOSE. It is filled on first use, so
    the per-call cost is one dict lookup. `fresh` maps a backend's own kernel to
    its allocating form (`Backend.fresh_kernels`), keyed by the kernel itself, so a
    wrapped kernel (tracer, recorder) finds none.
    """
    name: str
    kind: str
    args: tuple = ("x",)
    prim: bool | None = None
    n_out: int = 1
    dtypes: str | None = None
    promote: str = "default"
    grad: Callable | None = None
    decomp: Callable | None = None
    meta: Callable | None = None
    signature: str = ""
    doc: str = ""
    differentiable: bool | None = None
    data_dependent: bool = False      # output shape depends on values (export breaks there)
    save_for: dict | None = None
    domain: tuple | None = None
    forms: Forms | None = None
    grad_args: tuple = field(init=False, default=())
    getters: tuple = field(init=False, default=())
    save_masks: tuple = field(init=False, default=())
    kernels: dict = field(init=False, default=None)
    fresh: dict = field(init=False, default=None)
    function: Callable | None = field(init=False, default=None)
    inplace_function: Callable | None = field(init=False, default=None)

    def __post_init__(self):
        name = self.name
        spec = PRIMS.get(name)
        if self.prim is None:
            self.prim = spec is not None
        if self.prim and spec is None:
            raise ValueError(f"op {name!r} is declared a prim but is not in the prim catalogue")
        if not self.prim and self.decomp is None and self.kind not in FRONTEND_KINDS:
            raise ValueError(f"composite op {name!r} needs a decomposition")
        if self.prim:
            # the kernel's dtype rule is the catalogue's; a row may not state another
            if self.dtypes is not None and self.dtypes != spec.dtypes:
                raise ValueError(f"op {name!r}: dtypes {self.dtypes!r} disagrees with the prim "
                                 f"catalogue's {spec.dtypes!r} (state it once, in prims.py)")
            self.dtypes = spec.dtypes
            self.signature = self.signature or spec.signature
            self.doc = self.doc or spec.doc
        elif self.dtypes is None:
            self.dtypes = "all"
        self.args = tuple(self.args)
        if self.domain is not None and isinstance(self.domain[0], tuple) \
                and len(self.domain) != len(self.args):
            raise ValueError(f"op {name!r}: {len(self.domain)} sample domains for "
                             f"{len(self.args)} operands")
        grad = self.grad
        # A derivative rule names what it needs (inputs, `result`, params) by its
        # argument names; read once here so a call saves only those.
        self.grad_args = tuple(inspect.signature(grad).parameters)[1:] if grad else ()
        self.getters = tuple(_getter(a, self.args) for a in self.grad_args)
        # save_for: {input name: names of the inputs whose gradient needs it}. An input is
        # saved only if one of those requires grad (mul keeps `a` only for b's gradient).
        save_for = self.save_for or {}
        self.save_masks = tuple(
            tuple(self.args.index(n) for n in save_for[a]) if a in save_for else None
            for a in self.grad_args)
        if self.differentiable is None:
            self.differentiable = grad is not None or self.decomp is not None
        self.kernels = {}
        self.fresh = {}

    def __repr__(self):
        return f"<op {self.name} ({'prim' if self.prim else 'composite'})>"


Row = OpDef


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


def input_category(op) -> str:
    """The dtype category an op's frontend accepts: every dtype for an int_to_float op
    (integers and bool compute in the default float dtype), else its dtype rule. The one
    reading of a row's dtype rule (the executor's tables, docs/ops.md, the conformance
    suite's default dtypes)."""
    return "all" if op.promote == "int_to_float" else op.dtypes


def sample_domains(kind=None) -> dict:
    """{op name: (low, high)}: the rows' sample domains (of one kind, or all), the one
    source of the random values the unit tests (tests/ops) and the conformance suite
    draw for an op."""
    return {n: op.domain for n, op in OPS.items()
            if op.domain is not None and (kind is None or op.kind == kind)}


def form_of(row, inplace=False):
    """Decorator: `fn` is the hand-written function form of `row` (an OpDef, or a family
    object holding one as `.op`), or with inplace its `_` form; the public names
    (`written_forms`, torch.special) are read from the row."""
    op = getattr(row, "op", row)

    def attach(fn):
        if inplace:
            op.inplace_function = fn
        else:
            op.function = fn
        return fn
    return attach


class _FormsByName:
    """The public function forms by op name (`P.exp(x)`), for derivative rules and
    decompositions: like derivatives.yaml they name the ops they are written in, and the
    module that makes those forms (ops/pointwise.py) sits above the rows, so the rows read
    them from their rows (`OpDef.function`) at run time instead of importing it."""
    __slots__ = ()

    def __getattr__(self, name):
        op = OPS.get(name)
        if op is None or op.function is None:
            raise AttributeError(f"no op row {name!r} with a function form")
        return op.function


FORMS = _FormsByName()


def special_functions() -> dict:
    """{torch.special name: function}: every row's torch.special names (Forms.special, and
    `special_<x>` rows as `<x>`), bound to the row's function form."""
    names = {}
    for op in OPS.values():
        if op.forms is None or op.function is None:
            continue
        own = (op.name[len("special_"):],) if op.name.startswith("special_") else ()
        for n in own + op.forms.special:
            names[n] = op.function
    return names


def prim_row(name, *, kind, **fields) -> OpDef:
    """The row of a prim whose frontend function is written beside it (gather / scatter,
    sort, FFT, linalg: each has arguments and output geometry of its own, so its function
    runs the kernel through the executor and records this row itself). The kernel facts
    (dtypes, signature, doc) come from the prim catalogue; fields: the other row fields
    (args, n_out, grad, save_for, data_dependent, differentiable)."""
    if name not in PRIMS:
        raise ValueError(f"prim_row({name!r}): not in the prim catalogue (backend/prims.py)")
    return register_op(OpDef(name, kind=kind, **fields))


def frontend_row(name, *, kind, **fields) -> OpDef:
    """The row of a view, memory op or factory (FRONTEND_KINDS): carried out by the
    frontend with the backend's memory methods alone, so it has no kernel and no
    decomposition, and its function (written beside it) makes the output itself: a view
    aliases its input's storage, which no executor may do. The row gives that function
    its derivative rule (recorded by the function) and docs/ops.md its line."""
    if kind not in FRONTEND_KINDS:
        raise ValueError(f"frontend_row({name!r}): kind {kind!r} is not one of "
                         f"{sorted(FRONTEND_KINDS)}")
    return register_op(OpDef(name, kind=kind, **fields))


def operand_domains(op) -> tuple | None:
    """One (low, high) per operand of a row's sample domain (None: it has none)."""
    d = op.domain
    if d is None:
        return None
    return tuple(d) if isinstance(d[0], tuple) else (tuple(d),) * len(op.args)


def register_op(op: OpDef) -> OpDef:
    if op.name in OPS:
        raise ValueError(f"op {op.name!r} is declared twice")
    OPS[op.name] = op
    return op
