"""autograd.Function: users' own ops with a hand-written backward."""
from __future__ import annotations

import functools

from .. import ops as _ops
from .._tensor import Tensor
from .grad_mode import STATE, no_grad
from .graph import FREED, Node, _FREED


class FunctionCtx:
    """The `ctx` of forward and backward."""

    def __init__(self):
        self._saved = ()
        self._versions = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_diff = set()
        self._dirty = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save tensors (or None), but argument "
                                f"was of type {type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(t._vc()[0] if t is not None else None for t in tensors)

    @property
    def saved_tensors(self):
        if self._saved is FREED:
            raise RuntimeError(_FREED)
        for t, v in zip(self._saved, self._versions):
            if t is not None and t._vcount[0] != v:
                raise RuntimeError(f"one of the variables needed for gradient computation has been "
                                   f"modified by an inplace operation: [{t.dtype} {list(t.shape)}] "
                                   f"is at version {t._vcount[0]}; expected version {v} instead.")
        return self._saved

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _FunctionNode(Node):
    # outs: per output of forward, (shape, dtype, device) of a tensor, None for another
    # value (backward gets a gradient for each: zeros or None, and None for the others)
    __slots__ = ("ctx", "fn_name", "outs")

    def name(self):
        return f"{self.fn_name}Backward"

    def unpack_saved(self, retain):
        ctx = self.ctx
        if ctx._saved is FREED:
            raise RuntimeError(_FREED)
        if not retain and ctx._saved:
            ctx.saved_tensors               # check versions before freeing
            saved = ctx._saved
            ctx._saved = FREED
            self.saved = saved              # keep them alive for this one call
            return ()
        return ()


def _backward_rule(cls, node_ref):
    def rule(g, *unused):
        node = node_ref[0]
        ctx = node.ctx
        it = iter(g if node.n_out > 1 else (g,))
        grads = [None if m is None else next(it) for m in node.outs]
        if ctx.materialize_grads:       # as PyTorch: an output nothing used gets zeros
            for i, m in enumerate(node.outs):
                if m is not None and grads[i] is None:
                    grads[i] = _ops.zeros(m[0], dtype=m[1], device=m[2])
        if node.saved and ctx._saved is FREED:
            ctx._saved, freed = node.saved, True
        else:
            freed = False
        try:
            result = cls.backward(ctx, *grads)
        finally:
            if freed:
                ctx._saved = FREED
                node.saved = ()
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(node.next):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                               f"gradients (expected {len(node.next)}, got {len(result)})")
        return result
    return rule


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call
    `YourFunction.apply(*args)`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement the backward function for custom autograd.Function.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        track = STATE.enabled and any(ctx.needs_input_grad)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            out = cls.forward(*args, **kwargs) if uses_setup else cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, out)
        if not track:
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        # an input returned as is becomes a new tensor object: it gets its own history
        outs = tuple(o.detach() if isinstance(o, Tensor) and any(o is a for a in args) and
                     id(o) not in {id(d) for d in ctx._dirty} else o for o in outs)
        edges, meta = [], []
        for a in args:
            if isinstance(a, Tensor) and a._rg:
                edges.append((a._grad_fn, a._out_nr) if a._grad_fn is not None else (a, 0))
                meta.append((a._shape, a._dtype))
            else:
                edges.append(None)
                meta.append(None)
        tensor_outs = [o for o in outs if isinstance(o, Tensor)]
        ref = [None]
        node = _FunctionNode(cls.__name__, _backward_rule(cls, ref), (), (), tuple(edges),
                             tuple(meta), len(tensor_outs))
        node.ctx, node.fn_name = ctx, cls.__name__
        node.outs = tuple((o._shape, o._dtype, o.device) if isinstance(o, Tensor) else None
                          for o in outs)
        ref[0] = node
        for i, o in enumerate(tensor_outs):
            if o._dtype.is_grad and id(o) not in ctx._non_diff:
                o._grad_fn, o._out_nr, o._rg = node, i, True
        return outs[0] if single else outs


FunctionCtx.__name__ = "FunctionCtx"
Variable = Tensor


def once_differentiable(fn):
    """backward decorated with this runs without recording (no double backward)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper


from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402,F401  (their home)
