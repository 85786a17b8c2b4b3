"""torch.compiler (PyTorch 2.x): the questions and markers model code asks of the
compiler, answered by dispatchtorch.compile's capture (docs/compile.md). The capture
runs the function eagerly once per signature, recording its ops at the executor, so
"compiling" means a capture tracer is active on the calling thread."""
from __future__ import annotations

import functools
import sys

from .._capture import frames as _frames
from .._compile import compile, reset  # noqa: A004,F401  (torch.compiler.compile is torch.compile)

_BACKENDS = {"inductor": (), "eager": ("debug",), "aot_eager": ("debug",)}


def is_compiling():
    """True while dispatchtorch.compile or dispatchtorch.export captures on this thread:
    what the function does under it is what the graph replays."""
    return _frames.current() is not None


def is_dynamo_compiling():
    """The capture is this library's Dynamo: the same answer as is_compiling()."""
    return _frames.current() is not None


def is_exporting():
    """True while dispatchtorch.export (or onnx.export) captures on this thread."""
    export = sys.modules.get("dispatchtorch.export._export")
    return export is not None and export.exporting()


def list_backends(exclude_tags=("debug", "experimental")):
    """The `backend=` names dispatchtorch.compile accepts (eager / aot_eager are debug
    backends, as in PyTorch)."""
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKENDS.items() if not exclude.intersection(tags))


def disable(fn=None, recursive=True, *, reason=None):
    """fn runs eagerly, never captured: called during a capture it breaks the graph, so
    the enclosing compiled function (or, in a compiled module, the child module calling
    it) runs eagerly; there is no bytecode rewriting to resume after it (docs/compile.md,
    Graph breaks)."""
    if not recursive:
        raise NotImplementedError("torch.compiler.disable(recursive=False) is not supported: "
                                  "the capture cannot trace the functions a skipped frame "
                                  "calls while skipping the frame itself")
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    from .._compile.compiled import CompiledFunction
    from .._compile.module import OptimizedModule
    from ..nn.modules.module import Module
    if isinstance(fn, OptimizedModule):          # compiled: its module, run eagerly
        fn = fn._orig_mod
    if isinstance(fn, Module):
        fn.forward = disable(fn.forward, reason=reason)
        return fn
    inner = fn.fn if isinstance(fn, CompiledFunction) else fn
    why = f"torch.compiler.disable({getattr(inner, '__qualname__', inner)!s})" + (
        f": {reason}" if reason else "")

    @functools.wraps(inner)
    def disabled(*args, **kwargs):
        tr = _frames.current()
        if tr is not None:
            tr.graph_break(why)
        return inner(*args, **kwargs)
    disabled._torchdynamo_disable = True
    return disabled


def graph_break(msg=""):
    """torch._dynamo.graph_break: inside a capture, break the graph here (the function
    runs eagerly); outside one, nothing."""
    tr = _frames.current()
    if tr is not None:
        tr.graph_break("torch._dynamo.graph_break()" + (f": {msg}" if msg else ""))


def allow_in_graph(fn):
    """fn itself: the capture records the ops of every function it calls, so fn's are in
    the graph already."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, but got {type(fn).__name__}")
    return fn


def assume_constant_result(fn):
    """fn itself: Python values a captured function computes are constants of its graph
    (they are not recomputed on replay)."""
    fn._dynamo_marked_constant = True
    return fn


def cudagraph_mark_step_begin():
    """Nothing to mark: no backend here records CUDA graphs ("reduce-overhead" compiles as
    the default mode does)."""
    return None


__all__ = ["allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin",
           "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends",
           "reset"]
