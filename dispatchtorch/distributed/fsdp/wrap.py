"""Auto-wrap policies and the wrap()/enable_wrap() context, as torch.distributed.fsdp.wrap.

A policy is called as policy(module=, recurse=, nonwrapped_numel=): with recurse=True it
says whether to look inside the module's children, with recurse=False whether to wrap the
module itself (nonwrapped_numel: its parameters not already inside a wrapped child)."""
from __future__ import annotations

import contextlib

from ... import nn


def always_wrap_policy(module, recurse, *args, **kwargs):
    return True


def _module_wrap_policy(module, recurse, nonwrapped_numel, module_classes):
    if recurse:
        return True
    return isinstance(module, tuple(module_classes))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap every instance of the classes in transformer_layer_cls (use functools.partial)."""
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    if recurse:
        return True
    return lambda_fn(module)


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module once its not-yet-wrapped parameters reach min_num_params; never look
    inside force_leaf_modules, never wrap exclude_wrap_modules (containers) themselves."""
    force_leaf_modules = (size_based_auto_wrap_policy.FORCE_LEAF_MODULES
                          if force_leaf_modules is None else force_leaf_modules)
    exclude_wrap_modules = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
                            if exclude_wrap_modules is None else exclude_wrap_modules)
    is_large = nonwrapped_numel >= min_num_params
    if recurse:
        return is_large and not isinstance(module, tuple(force_leaf_modules))
    return is_large and not isinstance(module, tuple(exclude_wrap_modules))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


class ModuleWrapPolicy:
    """Wrap every module that is an instance of one of module_classes."""

    def __init__(self, module_classes):
        module_classes_set = set(module_classes)
        self._module_classes = module_classes_set
        self._module_classes_str = str(module_classes_set)

    def __call__(self, module, recurse, *args, **kwargs):
        return _module_wrap_policy(module, recurse, -1, self._module_classes)

    def __repr__(self):
        return super().__repr__() + f"({self._module_classes_str})"


class CustomPolicy:
    """lambda_fn(module) -> bool or a dict of keyword overrides for that module's wrap."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def __call__(self, module, recurse, *args, **kwargs):
        if recurse:
            return True
        return self._lambda_fn(module)


def _nonwrapped_numel(module, ignored_params, fsdp_cls):
    seen, total = set(), 0
    stack = [module]
    while stack:
        m = stack.pop()
        for p in m._parameters.values():
            if p is not None and id(p) not in ignored_params and id(p) not in seen:
                seen.add(id(p))
                total += p.numel()
        stack.extend(c for c in m._modules.values()
                     if c is not None and not isinstance(c, fsdp_cls))
    return total


def recursive_wrap(module, policy, wrapper_cls, ignored, ignored_params,
                   only_wrap_children=False, **kwargs):
    """PyTorch's _recursive_wrap: children first, then the module with what is left.
    Returns (module or its wrapper, number of parameters wrapped)."""
    if isinstance(module, wrapper_cls):
        return module, 0
    numel = _nonwrapped_numel(module, ignored_params, wrapper_cls)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        if child in ignored:
            continue
        new, n = recursive_wrap(child, policy, wrapper_cls, ignored, ignored_params,
                                **kwargs)
        if new is not child:
            setattr(module, name, new)
        wrapped += n
    remainder = numel - wrapped
    if not only_wrap_children:
        decision = policy(module=module, recurse=False, nonwrapped_numel=remainder)
        if decision:
            overrides = decision if isinstance(decision, dict) else {}
            return wrapper_cls(module, **{**kwargs, **overrides}), numel
    return module, wrapped


class _ConfigAutoWrap:
    in_autowrap_context = False
    wrapper_cls = None
    kwargs: dict = {}


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Inside, wrap(module) wraps with wrapper_cls(module, **wrapper_kwargs)."""
    if _ConfigAutoWrap.in_autowrap_context:
        raise NotImplementedError("You are already within an autowrap context and we currently "
                                  "do not supported nested autowrap.")
    _ConfigAutoWrap.in_autowrap_context = True
    _ConfigAutoWrap.wrapper_cls, _ConfigAutoWrap.kwargs = wrapper_cls, dict(wrapper_kwargs)
    try:
        yield
    finally:
        _ConfigAutoWrap.in_autowrap_context = False
        _ConfigAutoWrap.wrapper_cls, _ConfigAutoWrap.kwargs = None, {}


def wrap(module, **wrap_overrides):
    """Inside enable_wrap: the module wrapped (overrides win); outside: the module itself."""
    if not _ConfigAutoWrap.in_autowrap_context:
        return module
    kwargs = {**_ConfigAutoWrap.kwargs, **wrap_overrides}
    return _ConfigAutoWrap.wrapper_cls(module, **kwargs)


__all__ = ["CustomPolicy", "ModuleWrapPolicy", "always_wrap_policy", "enable_wrap",
           "lambda_auto_wrap_policy", "size_based_auto_wrap_policy",
           "transformer_auto_wrap_policy", "wrap"]
