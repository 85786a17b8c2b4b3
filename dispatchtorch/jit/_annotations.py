"""torch.jit's type annotations as eager code runs them: annotate returns the value,
Attribute is PyTorch's (value, type) namedtuple, isinstance checks typed containers
(List[int], Dict[str, Tensor], Optional[...], Tuple[...]) as PyTorch's eager one does."""
from __future__ import annotations

import builtins
import collections.abc
import types
import typing
import warnings
from typing import NamedTuple, Union, get_args, get_origin


def annotate(the_type, the_value):
    return the_value


class Attribute(NamedTuple):
    value: typing.Any
    type: typing.Any


_RAW = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
        typing.Optional: "Optional", typing.Tuple: "Tuple"}


def _check_args_exist(target):
    name = _RAW.get(target)
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _warn_if_empty(obj):
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in "
                      "eager mode. For example, List[int] would become list and therefore falsely "
                      "return True for List[float] or List[str].", stacklevel=3)


def _element(obj, t):
    return _container(obj, t) if get_origin(t) else builtins.isinstance(obj, t)


def _container(obj, target):
    origin = get_origin(target)
    _check_args_exist(target)
    args = get_args(target)
    if origin is list:
        _warn_if_empty(obj)
        return builtins.isinstance(obj, list) and all(_element(e, args[0]) for e in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return builtins.isinstance(obj, dict) and all(
            builtins.isinstance(k, args[0]) and _element(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _warn_if_empty(obj)
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args)
                and all(_element(e, t) for e, t in zip(obj, args)))
    if origin is Union or origin is types.UnionType:
        if obj is None:
            return True
        for t in args:
            if get_origin(t):
                return _container(obj, t)
            if builtins.isinstance(obj, t):
                return True
    return False


def isinstance(obj, target_type):  # noqa: A001
    """builtins.isinstance that also checks a typed container's elements."""
    if builtins.isinstance(target_type, collections.abc.Container):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a "
                               "tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    if get_origin(target_type):
        return _container(obj, target_type)
    _check_args_exist(target_type)
    return builtins.isinstance(obj, target_type)
