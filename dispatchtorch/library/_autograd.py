"""A custom op's autograd: one autograd.Function per op (PyTorch's GeneratedBackwardFor_*),
its list-of-tensor arguments flattened into the Function's inputs, the registered
`setup_context` / `backward` called with the op's own argument structure."""
from __future__ import annotations

from ..autograd.function import Function
from .._tensor import Tensor


class _Meta:
    """The last input of the Function: how to rebuild the op's arguments (not a tensor)."""
    __slots__ = ("spec", "kwargs", "listed")

    def __init__(self, spec, kwargs):
        self.spec, self.kwargs, self.listed = spec, kwargs, False


def _flatten(args):
    flat, spec = [], []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(e, Tensor) for e in a):
            flat.extend(a)
            spec.append(len(a))
        else:
            flat.append(a)
            spec.append(None)
    return flat, spec


def _unflatten(flat, spec):
    out, i = [], 0
    for n in spec:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return out


def make_function(opdef):
    """The Function class that runs `opdef`'s kernel and its registered backward."""
    def forward(ctx, *flat):
        meta = flat[-1]
        args = _unflatten(flat[:-1], meta.spec)
        result = opdef._run_kernel(args, meta.kwargs)
        if opdef._setup_context_fn is not None:
            if meta.kwargs or any(a.kw_only for a in opdef._parsed.args):
                opdef._setup_context_fn(ctx=ctx, inputs=tuple(args),
                                        keyword_only_inputs=meta.kwargs, output=result)
            else:
                opdef._setup_context_fn(ctx=ctx, inputs=tuple(args), output=result)
        ctx._pt_spec = meta.spec
        if isinstance(result, list):            # a Tensor[] return: the Function's outputs
            meta.listed = True
            return tuple(result)
        return result

    def backward(ctx, *grads):
        if opdef._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {opdef._packet_name}.default but no "
                               "autograd formula was registered. Please use register_autograd "
                               "to add one.")
        if opdef._parsed.returns == ("Tensor[]",):   # a list return: its gradients as one list
            grads = (list(grads),)
        saved = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(_unflatten(saved[:-1], ctx._pt_spec))
        try:
            result = opdef._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = saved
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(ctx._pt_spec):
            return (*result, None)              # the Function's count check names the error
        flat = []
        for g, n in zip(result, ctx._pt_spec):
            if n is None:
                flat.append(g)
            elif g is None:
                flat.extend([None] * n)
            elif isinstance(g, (list, tuple)) and len(g) == n:
                flat.extend(g)
            else:
                raise RuntimeError(f"Expected the return from backward to be of the same "
                                   f"structure as the inputs: a list of {n} gradients (or None) "
                                   f"for a list of {n} tensors, got {g!r}")
        return (*flat, None)

    name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name.replace('.', '_')}_default"
    return type(name, (Function,), {"forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


def apply(fn_cls, args, kwargs):
    flat, spec = _flatten(args)
    meta = _Meta(spec, kwargs)
    out = fn_cls.apply(*flat, meta)
    return list(out) if meta.listed else out
