"""Graph capture at the executor's choke point, shared by dispatchtorch.compile and
dispatchtorch.export.

    from dispatchtorch._capture import capture, trace
    graph, out = capture(model, x)            # forward only; model's params by name
    graph, out = trace(model, (x,), backward=True)   # forward and the backward autograd ran
    print(graph.pretty())

How: the program runs once, eagerly and for real, while the calling thread's Tracer
records every kernel launch (the backend kernel table, so the elementwise fast
paths, reductions, matmul, composites' own kernels and the CPU fallback are all
seen) and every memory call (empty, as_strided, copy_, fill_, from_host), in order.
Nothing is added to the per-op path: the tables and methods are swapped for
wrappers only while some thread traces (see tracer.install).

What the Graph holds (graph.py, plain dataclasses):
- values: one Value per backend handle (buffer or view: shape, dtype, strides,
  offset, device, base = the storage it aliases);
- placeholders: the arguments ("args[0]", "kwargs['x']"), the module's parameters and
  buffers by name ("fc1.weight"), constants (handles made outside the graph or from
  host data: tensor literals, cached scalars, with their values in .data; a constant
  whose elements are all one number has splat=True), and for backward the incoming
  gradients "grad[i]";
- nodes, in the order they ran: kind "kernel" (op = prim or composite-kernel name:
  add, sum, matmul, linear, softmax ...; inputs = value ids or Scalar; params = the
  kernel's keywords), "memory" (empty, as_strided, copy_, fill_), "composite" (a
  composite the backend has no kernel for, e.g. layer_norm, conv2d, attention,
  recorded whole with its inputs/params; the prims of its decomposition follow it
  with parent = its id), "random" (host random values written into a buffer,
  e.g. dropout's mask; params["draw"] redraws). A node's outputs are the buffers it
  writes; inplace=True when it writes an existing buffer or a view of one (x.add_(1),
  x[0] = 1: as_strided + copy_), so views and in-place ops keep their semantics.
  Each node has phase ("forward"/"backward") and source (the user's line).
- outputs (value ids) and output_spec (capture.unflatten rebuilds the structure);
  grad_inputs [(placeholder name, gradient value id | None)] with backward=True.
- checks: argument checks that read values on the host (embedding's index range)
  recorded as Check(lo, hi, low, high, error, at_node) instead of breaks
  (ops/_checks.range_check, recorded by checks.py): a replay checks again at the same point;
- breaks: data-dependent calls (item(), tolist(), bool(t), nonzero, printing: any
  call that needs a tensor's values on the host), and random draws other than the
  in-place ones (torch.rand inside the function), as GraphBreak(op, reason, source,
  at_node). The trace still completes (the program ran eagerly); a graph with breaks
  does not describe the program past at_node.

graph.prim_nodes() are what a replay runs; graph.whole_nodes() keeps composites
whole (what an exporter maps: linear, conv2d, softmax, layer_norm, attention).
Handles live in Tracer.handles only while tracing; a graph holds no handles except
constants' (Placeholder.handle).
"""
from .capture import capture, flatten, module_tensors, trace, unflatten
from .graph import (BUFFER, CHECK, COMPOSITE, CONSTANT, GRAD_OUTPUT, INPUT, KERNEL, MEMORY,
                    PARAMETER, RANDOM, Check, Graph, GraphBreak, Node, Placeholder, Ref, Scalar,
                    Value)
from .tracer import Tracer, current

__all__ = ["capture", "trace", "flatten", "unflatten", "module_tensors", "Tracer", "current",
           "Graph", "GraphBreak", "Check", "CHECK", "Node", "Placeholder", "Ref", "Scalar", "Value", "KERNEL",
           "MEMORY", "COMPOSITE", "RANDOM", "INPUT", "PARAMETER", "BUFFER", "CONSTANT",
           "GRAD_OUTPUT"]
