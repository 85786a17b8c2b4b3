"""Binding a call's arguments to a custom op's schema, with the TypeErrors' PyTorch
equivalents (RuntimeError naming the argument, its position and the declaration)."""
from __future__ import annotations

from .._device import device
from .._dtype import dtype
from .._tensor import Tensor
from ._schema import _NO_DEFAULT


def _is(ty, v):
    if ty.endswith("?"):
        return v is None or _is(ty[:-1], v)
    if ty.endswith("[]"):
        return isinstance(v, (list, tuple)) and all(_is(ty[:-2], e) for e in v)
    return {"Tensor": lambda: isinstance(v, Tensor),
            "SymInt": lambda: isinstance(v, int),
            "float": lambda: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda: isinstance(v, bool),
            "str": lambda: isinstance(v, str),
            "Scalar": lambda: isinstance(v, (int, float, bool, complex)),
            "ScalarType": lambda: isinstance(v, dtype),
            "Device": lambda: isinstance(v, (device, str))}.get(ty, lambda: True)()


def _pretty(ty):
    return {"SymInt": "int", "SymInt[]": "List[int]", "Tensor[]": "List[Tensor]",
            "Tensor?": "Optional[Tensor]"}.get(ty, ty)


def bind(qualname, decl, schema, args, kwargs):
    """(positional values, keyword-only values) with defaults filled in."""
    if len(args) > sum(not a.kw_only for a in schema.args):
        raise RuntimeError(f"{qualname}() expected at most "
                           f"{sum(not a.kw_only for a in schema.args)} argument(s) but received "
                           f"{len(args)} argument(s). Declaration: {decl}")
    pos, kw, kwargs = [], {}, dict(kwargs)
    for i, a in enumerate(schema.args):
        if i < len(args) and not a.kw_only:
            v = args[i]
            if a.name in kwargs:
                raise RuntimeError(f"{qualname}() got multiple values for argument '{a.name}'. "
                                   f"Declaration: {decl}")
        elif a.name in kwargs:
            v = kwargs.pop(a.name)
        elif a.default is not _NO_DEFAULT:
            v = a.default
        else:
            raise RuntimeError(f"{qualname}() is missing value for argument '{a.name}'. "
                               f"Declaration: {decl}")
        if not _is(a.type, v):
            raise RuntimeError(f"{qualname}() Expected a value of type '{_pretty(a.type)}' for "
                               f"argument '{a.name}' but instead found type '{type(v).__name__}'.\n"
                               f"Position: {i}\nValue: {v!r}\nDeclaration: {decl}")
        (kw.__setitem__(a.name, v) if a.kw_only else pos.append(v))
    if kwargs:
        raise RuntimeError(f"{qualname}() got an unexpected keyword argument "
                           f"'{next(iter(kwargs))}'. Declaration: {decl}")
    return pos, kw


def tensors_of(values):
    """Every tensor among the values, list elements included."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(e for e in v if isinstance(e, Tensor))
    return out
