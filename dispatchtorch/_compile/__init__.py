"""dispatchtorch.compile: capture a function or module as a graph of prims on its first
call per signature, optimise it (DCE, CSE, elementwise fusion through the backend's
`fuse_elementwise` hook, buffer reuse) and replay it without the frontend.

See docs/compile.md. The graph comes from dispatchtorch._capture (shared with export).
"""
from __future__ import annotations

import sys

from .errors import Unsupported

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("default", "inductor", "eager", "aot_eager")
_OPTIONS = ("fusion", "cse", "dce", "buffer_reuse")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile: a module whose forward is compiled (parameters shared), or a
    compiled function; without `model`, a decorator.

    backend: "inductor"/"default" fuse elementwise chains into generated kernels;
    "eager"/"aot_eager" replay the captured prims unfused. mode is accepted for
    compatibility (every mode compiles the same way here). options: {"fusion",
    "cse", "dce", "buffer_reuse": bool} switch the passes. dynamic=True: the
    arguments' sizes are symbols, one capture serves every size its guards accept;
    None (default): specialise, then make the dims that changed dynamic on the second
    capture; False: one capture per shape (see _compile/dynamic.py, docs/compile.md).
    """
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified "
                           "at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if callable(backend) or backend not in _BACKENDS:
        raise NotImplementedError(f"compile: backend={backend!r} is not supported; use one of "
                                  f"{', '.join(_BACKENDS)}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile: dynamic must be None, True or False, got {dynamic!r}")
    opts = dict(options or {})
    for k, v in opts.items():
        if k not in _OPTIONS:
            raise RuntimeError(f"Unexpected optimization option {k}, known options are "
                               f"{list(_OPTIONS)}")
        if not isinstance(v, bool):
            raise RuntimeError(f"compile: option {k} must be a bool, got {type(v).__name__}")
    if not callable(model):
        raise RuntimeError("compile: model must be a callable (a function or an nn.Module), got "
                           f"{type(model).__name__}")
    if disable:
        return model
    from ..nn.modules.module import Module
    from .compiled import CompiledFunction
    from .module import OptimizedModule
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, backend=backend, options=opts,
                               dynamic=dynamic)
    cf = CompiledFunction(model, module=_module_of(model), fullgraph=fullgraph, backend=backend,
                          options=opts, dynamic=dynamic)
    import functools
    functools.update_wrapper(cf, model, updated=())
    return cf


def _module_of(fn):
    from ..nn.modules.module import Module
    owner = getattr(fn, "__self__", None)
    return owner if isinstance(owner, Module) else None


def reset():
    """Forget every captured graph (torch._dynamo.reset)."""
    compiled = sys.modules.get(__name__ + ".compiled")     # nothing compiled: nothing to do
    if compiled is not None:
        for cf in list(compiled._REGISTRY):
            cf.reset()


def __getattr__(name):
    # the compiler itself loads on first use: `import dispatchtorch` does not pay for it
    if name == "CompiledFunction":
        from .compiled import CompiledFunction
        return CompiledFunction
    if name == "OptimizedModule":
        from .module import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["compile", "reset", "CompiledFunction", "OptimizedModule", "Unsupported"]
