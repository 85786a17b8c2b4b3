"""LazyModuleMixin: layers whose parameter shapes come from their first input."""
from __future__ import annotations

import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy


class LazyModuleMixin:
    """On the first call, initialize_parameters(*input) materializes the
    Uninitialized parameters and buffers, then the module becomes cls_to_become."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else \
                    param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(tuple(value.shape))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")


def install_lazy_hooks(module):
    """What LazyModuleMixin.__init__ adds, for lazy classes that run their eager base's
    __init__ directly (then swap in Uninitialized parameters)."""
    module.__dict__["_load_hook"] = module._register_load_state_dict_pre_hook(
        module._lazy_load_hook)
    module.__dict__["_initialize_hook"] = module.register_forward_pre_hook(
        module._infer_parameters, with_kwargs=True)
