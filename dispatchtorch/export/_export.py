"""dispatchtorch.export.export: capture a module's forward in inference mode."""
from __future__ import annotations

import threading

from .. import _capture as C
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._dynamic import input_axes, resized, symbols_of, unify
from ._program import ExportedProgram
from ._symbolic import sample_points


class ExportError(RuntimeError):
    """The program cannot be exported as one graph (data-dependent control flow, a
    random op, a graph that changes with a dynamic size)."""


def export(mod, args, kwargs=None, *, dynamic_shapes=None):
    """The forward graph of `mod(*args, **kwargs)`, run once per traced size under
    no_grad, as an ExportedProgram. dynamic_shapes: as torch.export (a dict by
    argument name or a tuple, of {axis: Dim}). The module's training flag is kept:
    call mod.eval() first for dropout and batch norm to export."""
    if not isinstance(args, tuple):
        raise TypeError(f"export: args must be a tuple of inputs, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    args = tuple(_contiguous(a) for a in args)
    kwargs = {k: _contiguous(v) for k, v in kwargs.items()}
    top = list(args) + list(kwargs.values())
    axes = input_axes(mod, args, kwargs, dynamic_shapes)
    named = C.module_tensors(mod)
    dynamic, ranges = {}, {}
    if not axes:
        graph = _capture(mod, args, kwargs)
    else:
        examples = symbols_of(axes, top)
        for (pos, axis), d in axes.items():
            dynamic.setdefault(d.__name__, []).append((pos, axis))
            ranges[d.__name__] = (d.min, d.max)
        static = {n for i, t in enumerate(top) if isinstance(t, Tensor)
                  for a, n in enumerate(t.shape) if (i, a) not in axes}
        static |= {n for t, _ in named.values() for n in t.shape}
        points = sample_points(ranges, static, examples)
        graphs = []
        for point in points:
            vals = resized(top, axes, point)
            try:
                graphs.append(_capture(mod, tuple(vals[:len(args)]),
                                       dict(zip(kwargs, vals[len(args):]))))
            except ExportError:
                raise
            except Exception as exc:
                raise ExportError(
                    f"export: to fit the dynamic dims the model runs at the sizes "
                    f"{sorted(set((k, p[k]) for p in points for k in p))}; at {point} it "
                    f"failed: {type(exc).__name__}: {exc}. Give the dims a range the model "
                    f"accepts (Dim(name, min=..., max=...))") from exc
        try:
            graph = unify(graphs, points)
        except Exception as exc:
            raise ExportError(f"export: the captured graph changes with the dynamic sizes in a "
                              f"way one graph cannot express: {exc}") from None
    state = {p.name: named[p.name][0].detach() for p in graph.placeholders
             if p.kind in (C.PARAMETER, C.BUFFER) and p.name in named}
    inputs = [p.name for p in graph.placeholders if p.kind == C.INPUT
              and not p.name.endswith(".storage")]
    return ExportedProgram(graph, state, inputs, dynamic, ranges)


def _contiguous(x):
    """x as a tensor of its own (a view of a larger storage would be captured with all
    of it as an input)."""
    if isinstance(x, Tensor) and (x._storage is not None or x._offset):
        return x.detach().clone()
    return x


_EXPORTING = threading.local()     # .depth: captures for export running on this thread


def exporting():
    """Whether this thread is capturing a module for export (torch.compiler.is_exporting)."""
    return getattr(_EXPORTING, "depth", 0) > 0


def _capture(mod, args, kwargs):
    _EXPORTING.depth = getattr(_EXPORTING, "depth", 0) + 1
    try:
        with no_grad():
            graph, _ = C.trace(mod, args, kwargs)
    finally:
        _EXPORTING.depth -= 1
    _check_breaks(graph)
    for n in graph.forward_nodes():
        if n.kind == C.RANDOM:
            raise ExportError(f"export: {n.op} draws random values (at {n.source}); a dropout "
                              "in training mode? Call model.eval() before exporting")
    for p in graph.placeholders:
        p.handle = None                   # the graph keeps host data only
    return graph


def _check_breaks(graph):
    """Fail on data-dependent control flow and data-dependent shapes. Allowed host
    reads: the frontend's argument checks (_CHECKS: index ranges, integer divisors),
    and a read of an integer or bool tensor computed from integer inputs and constants
    alone (taken for a check too). They ran on the example inputs; the exported graph
    does not repeat them. Any other read (`if x.sum() > 0`, `.item()` of an
    activation, a size computed from values) is refused."""
    from ..dispatch import OPS
    for n in graph.forward_nodes():
        op = OPS.get(n.op)
        if op is not None and op.data_dependent:
            raise ExportError(f"export: {n.op} (at {n.source or 'an unknown line'}) has an output "
                              "size that depends on the input values; one graph cannot hold it")
    if not graph.breaks:
        return
    values = graph.values
    floaty = {vid for vid, v in values.items() if v.dtype in _FLOATS}
    for n in graph.nodes:
        ins = [a for a in n.inputs if isinstance(a, int)]
        ins += [v.value for v in n.params.values() if isinstance(v, C.Ref)]
        if any(i in floaty or values[i].base in floaty for i in ins):
            floaty.update(n.outputs)
    for br in graph.breaks:
        if any(f in _CHECKS for f in getattr(br, "frames", ())):
            continue
        vid = getattr(br, "value", None)
        if vid is not None and values[vid].dtype not in _FLOATS \
                and vid not in floaty and values[vid].base not in floaty:
            continue
        raise ExportError(f"export: data-dependent control flow at {br.source or 'an unknown line'}"
                          f" ({br.op}): {br.reason}; export needs one graph for all inputs")


_FLOATS = ("float16", "bfloat16", "float32", "float64")
# the frontend functions whose host reads only validate arguments (they raise or pass)
_CHECKS = frozenset({"ops/gather_scatter.py:check_index", "ops/pointwise.py:_check_int_divisor",
                     "nn/functional/_linear.py:embedding"})
