"""spectral_norm / remove_spectral_norm (the hook form): w = w_orig / sigma, sigma
estimated by power iteration (one step per training forward) with the buffers
`<name>_u`, `<name>_v`, as PyTorch."""
from __future__ import annotations

from ... import ops as _ops
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from ._norms import to_matrix

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _default_dim(module):
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


class SpectralNorm:
    _replayable = True   # a compiled module's replay repeats this hook: tensor ops only
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim = name, dim
        self.n_power_iterations, self.eps = n_power_iterations, eps

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = to_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mat.T @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat @ v, dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name,
                           self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            mat = to_matrix(weight, dim)
            h, w = mat.shape
            u = F.normalize(_ops.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                            dim=0, eps=eps)
            v = F.normalize(_ops.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                            dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    SpectralNorm.apply(module, name, n_power_iterations,
                       _default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
