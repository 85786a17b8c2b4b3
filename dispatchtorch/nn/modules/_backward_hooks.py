"""Module full backward hooks: identity autograd Functions around a module's tensor
inputs and outputs catch grad_output and grad_input, as PyTorch's BackwardHook."""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled


def _tensors(values):
    return [i for i, v in enumerate(values) if isinstance(v, Tensor)]


class _Identity(Function):
    """Passes tensors through; its backward hands the incoming gradients to `on_grad`
    and returns what it returns."""

    @staticmethod
    def forward(ctx, on_grad, *tensors):
        ctx.on_grad = on_grad
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grad(grads))


class BackwardHook:
    """One forward call's bookkeeping: grad_output arrives first (output identity),
    then grad_input (input identity) runs the user's hooks."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_output = None
        self.n_inputs = 0
        self.input_wrapped = False

    def setup_input_hook(self, args):
        idx = [i for i in _tensors(args) if args[i].requires_grad]
        self.n_inputs = len(_tensors(args))
        if not idx or not is_grad_enabled():
            return args
        self.input_wrapped = True
        wrapped = _Identity.apply(self._on_input_grad, *[args[i] for i in idx])
        if isinstance(wrapped, Tensor):
            wrapped = (wrapped,)
        out = list(args)
        for i, w in zip(idx, wrapped):
            out[i] = w
        self._input_idx = idx
        return tuple(out)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, (tuple, list)) or not is_grad_enabled():
            return result
        idx = [i for i in _tensors(values) if values[i].requires_grad]
        if not idx:
            return result
        wrapped = _Identity.apply(self._on_output_grad, *[values[i] for i in idx])
        if isinstance(wrapped, Tensor):
            wrapped = (wrapped,)
        out = list(values)
        for i, w in zip(idx, wrapped):
            out[i] = w
        self._output_idx, self._n_outputs = idx, len(values)
        return out[0] if single else type(values)(out) if isinstance(values, tuple) else out

    def _on_output_grad(self, grads):
        full = [None] * self._n_outputs
        for i, g in zip(self._output_idx, grads):
            full[i] = g
        grad_output = tuple(full)
        for hook in self.pre_hooks:
            r = hook(self.module, grad_output)
            if r is not None:
                grad_output = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_output = grad_output
        if not self.input_wrapped:        # no input needs grad: hooks see grad_input None
            for hook in self.hooks:
                hook(self.module, (None,) * max(self.n_inputs, 1), grad_output)
        return tuple(grad_output[i] for i in self._output_idx)

    def _on_input_grad(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self._input_idx, grads):
            full[i] = g
        grad_input = tuple(full)
        for hook in self.hooks:
            r = hook(self.module, grad_input, self.grad_output)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(r)}, but expected {len(grad_input)}")
                grad_input = r
        return tuple(grad_input[i] for i in self._input_idx)
