"""torch._dynamo's user-facing corner: reset(), explain(), config and exc."""
from __future__ import annotations

from dataclasses import dataclass, field

from .._compile import reset
from . import config, exc  # noqa: F401
from .marks import mark_dynamic, mark_static, maybe_mark_dynamic
# torch._dynamo's markers and questions, as torch.compiler answers them
from ..compiler import (allow_in_graph, assume_constant_result, disable,  # noqa: F401,E402
                        graph_break, is_compiling, list_backends)


@dataclass
class ExplainOutput:
    """What explain(fn)(*args) found: the graphs captured, the breaks and why, and the
    kernels generated for each graph."""
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    ops_per_graph: list = field(default_factory=list)
    generated: list = field(default_factory=list)     # per graph: [kernel source]
    text: str = ""

    def __str__(self):
        head = (f"Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\n"
                f"Op Count: {sum(len(o) for o in self.ops_per_graph)}\n")
        if self.break_reasons:
            head += "Break Reasons:\n" + "".join(
                f"  Break Reason {i + 1}: {b.op}: {b.reason}\n    {b.source}\n"
                for i, b in enumerate(self.break_reasons))
        return head + self.text


def explain(fn, *extra_args, **extra_kwargs):
    """explain(fn)(*args, **kwargs) -> ExplainOutput, running fn once compiled."""
    if extra_args or extra_kwargs:
        return explain(fn)(*extra_args, **extra_kwargs)

    def inner(*args, **kwargs):
        from .._compile import _module_of
        from .._compile.compiled import CompiledFunction, Entry
        from ..nn.modules.module import Module
        mod = fn if isinstance(fn, Module) else _module_of(fn)
        cf = CompiledFunction(fn, module=mod)
        cf(*args, **kwargs)
        out = ExplainOutput()
        for e in cf.cache.values():
            g = e.graph
            out.graphs.append(g)
            out.ops_per_graph.append([n.op for n in g.prim_nodes("forward") if n.kind == "kernel"])
            out.break_reasons.extend(g.breaks)
            if isinstance(e, Entry):
                out.generated.append(e.forward.sources
                                     + (e.backward.sources if e.differentiable else []))
        out.graph_count = len(out.graphs)
        out.graph_break_count = len(out.break_reasons)
        out.text = cf.explain()
        cf.reset()
        return out
    return inner


__all__ = ["reset", "explain", "ExplainOutput", "config", "exc", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static"]
