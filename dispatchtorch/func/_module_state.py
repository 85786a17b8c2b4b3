"""functional_call and stack_module_state: a module's parameters as plain arguments, for
the transforms (per-sample gradients, model ensembles)."""
from __future__ import annotations

from .. import ops as _ops
from ..nn.utils.stateless import functional_call

__all__ = ["functional_call", "stack_module_state"]


def stack_module_state(models):
    """({name: the models' parameters stacked}, {name: their buffers stacked}). The stacked
    parameters are new leaves, requiring grad as the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval "
                           "mode.")
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: _stacked_leaf([dict(m.named_parameters())[name] for m in models], name)
              for name, _ in models[0].named_parameters()}
    buffers = {name: _stacked_leaf([dict(m.named_buffers())[name] for m in models], name)
               for name, _ in models[0].named_buffers()}
    return params, buffers


def _stacked_leaf(tensors, name):
    needs = {t.requires_grad for t in tensors}
    if len(needs) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = _ops.stack([t.detach() for t in tensors])
    return out.requires_grad_(True) if needs.pop() else out
