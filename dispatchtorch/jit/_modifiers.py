"""The torch.jit decorators: in eager PyTorch they tag the function for a later
torch.jit.script (the same `_torchscript_modifier` strings) and return it unchanged."""
from __future__ import annotations

import functools
import warnings


class FunctionModifiers:
    """What each decorator tells TorchScript (PyTorch's strings)."""
    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"


def is_scripting():
    """False: nothing runs under TorchScript here."""
    return False


def is_tracing():
    """False: torch.jit.trace does not exist here (dispatchtorch.compile's capture is
    not TorchScript tracing)."""
    return False


def export(fn):
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn


def unused(fn):
    if isinstance(fn, property):
        for f in (fn.fget, fn.fset):
            if f is not None:
                f._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED
    return fn


def ignore(drop=False, **kwargs):
    """@ignore, or @ignore(drop=...) (drop=True: the deprecated spelling of @unused)."""
    if callable(drop):
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop "
                      "the function call on compilation. Use torch.jit.unused now. {}",
                      FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)

    def decorator(fn):
        fn._torchscript_modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
        return fn
    return decorator


def interface(obj):
    """The class itself: an interface only constrains TorchScript's type checking.
    PyTorch's structural checks on the class are kept."""
    import inspect
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    from ..nn.modules.module import Module
    is_module = issubclass(obj, Module) and len(obj.mro()) == 3
    if not is_module and len(obj.mro()) > 2:
        raise RuntimeError("TorchScript interface does not support inheritance yet. "
                           "Please directly inherit from 'object' or 'nn.Module'.")
    return obj


def script_if_tracing(fn):
    """Eagerly fn runs as it is (PyTorch scripts it only under torch.jit.trace)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


class strict_fusion:
    """A TorchScript fusion assertion: eagerly PyTorch warns and does nothing."""

    def __init__(self):
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None
