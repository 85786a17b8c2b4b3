"""weight_norm / remove_weight_norm (the hook form): w = g * v / ||v||, recomputed
before each forward from the parameters `<name>_g` and `<name>_v`."""
from __future__ import annotations

import warnings

from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from ._norms import norm_except_dim, weight_norm_value

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    _replayable = True   # a compiled module's replay repeats this hook: tensor ops only

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_value(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim)
                                                         .detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        object.__setattr__(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
