"""PyTorch's argument parser's errors, for the torch-level functions that check their
arguments by hand: a wrong type is a TypeError naming the function, the argument and
(when it came positionally) its position, in the parser's words."""
from __future__ import annotations

import inspect
import numbers
import operator

from .._tensor import Tensor


def bool_arg(fn, name, pos, value):
    """PyTorch's argument parser's TypeError for a non-bool: it names the position (1-based)
    only when the argument came positionally, so `pos` is None for a keyword."""
    if not isinstance(value, bool):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not "
                        f"{type(value).__name__}")


def one_arg(fn, args, kwargs):
    """The single positional argument of a METH_O builtin (torch.set_flush_denormal, ...),
    with CPython's errors for any other call."""
    if kwargs:
        raise TypeError(f"torch.{fn}() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"torch.{fn}() takes exactly one argument ({len(args)} given)")
    return args[0]


def signature(*params):
    """Give a hand-parsed fn(*args, **kwargs) PyTorch's signature for inspect and help()."""
    def bind(fn):
        fn.__signature__ = inspect.Signature(list(params))
        return fn
    return bind


def tensor_arg(fn, value):
    """PyTorch's argument parser's TypeError for a non-tensor `input`."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")
    return value


def int_arg(fn, name, pos, value):
    """PyTorch's parser's TypeError for a non-int (bool and float are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def int_tuple(fn, name, pos, value):
    """PyTorch's parser's TypeError for a size or stride that is not a sequence of ints."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of "
                            f"ints, but found element of type {type(v).__name__} at pos {i}")
    return tuple(operator.index(v) for v in value)
