"""Parametrizations (PyTorch's torch.nn.utils.parametrize): `module.weight` computed
on each access from `module.parametrizations.weight.original` by a chain of small
modules, so an optimizer trains the original and the constraint always holds.

The module's class is swapped for a generated subclass `Parametrized<Name>` that
holds the property, as in PyTorch, so state dict keys
(`parametrizations.weight.original`) and behaviour match.
"""
from __future__ import annotations

import contextlib
import copyreg
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside, each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest, src):
    """dest.set_(src) when src is a new tensor: keep the object, take the values."""
    if dest is not src:
        dest.data = src.detach() if isinstance(src, Tensor) else src


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding its `original`."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, list, tuple)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the sequence "
                                     f"with type {type(t).__name__}.")
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                t.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", t)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of the "
                                 f"tensor, unless `unsafe` flag is enabled.\nunparametrized "
                                 f"dtype: {dtype}\nparametrized dtype: {z.dtype}")
            if tuple(z.shape) != shape:
                raise ValueError(f"Registering a parametrization may not change the shape of the "
                                 f"tensor, unless `unsafe` flag is enabled.\nunparametrized "
                                 f"shape: {shape}\nparametrized shape: {tuple(z.shape)}")

    def right_inverse(self, value):
        """Assigning `module.weight = value` stores right_inverse(value) in original."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       f"right_inverse.")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                self.original.copy_(value) if tuple(value.shape) == \
                    tuple(self.original.shape) else _maybe_set(self.original, value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, t in enumerate(value):
                    _maybe_set(getattr(self, f"original{i}"), t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                           "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                           "inference-and-or-resuming-training")
    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            t = _cache.get(key)
            if t is None:
                t = _cache[key] = parametrization()
            return t
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)
    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype or tuple(x.shape) != tuple(y.shape):
                raise ValueError("Registering a parametrization may not change the shape or "
                                 "dtype of the tensor, unless the `unsafe` flag is enabled.")
            if hasattr(parametrization, "right_inverse"):
                z = parametrization.right_inverse(x)
                if not isinstance(z, Tensor) or tuple(z.shape) != tuple(y.shape):
                    raise ValueError("parametrization.right_inverse must return a tensor of the "
                                     "same shape as its input")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            with no_grad():
                if tuple(t.shape) == tuple(original.shape):
                    original.copy_(t)
                else:
                    _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if \
            isinstance(parametrizations.original0, Parameter) else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    if not is_parametrized(from_module):
        raise ValueError(f"Module {from_module} does not have parametrizations")
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        with no_grad():
            src, dst = from_module.parametrizations[name], to_module.parametrizations[name]
            if src.is_tensor:
                dst.original.data = src.original.detach().clone()
            else:
                for i in range(src.ntensors):
                    getattr(dst, f"original{i}").data = getattr(src, f"original{i}").detach() \
                        .clone()
    return to_module
