"""The captured-graph IR: plain dataclasses, no behaviour beyond printing and lookups.

Values name backend buffers and views (one per handle the program touched); nodes
are the calls that created or wrote them, in the order they ran. A node's
`outputs` are the buffers it writes: a fresh one (made by an `empty` node just
before) or, for in-place ops, an existing buffer or a view of one. So a value may
be written more than once; `Value.base` says which storage a view aliases.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Node kinds
KERNEL = "kernel"          # a backend kernel: a prim or a composite the backend implements
MEMORY = "memory"          # empty / as_strided / copy_ / fill_: the backend memory methods
COMPOSITE = "composite"    # a composite that ran its decomposition: its children follow it
RANDOM = "random"          # host-drawn random values written into a buffer (dropout masks)
CHECK = "check"            # a replay's pseudo-node for a graph.checks entry (not in graph.nodes)

# Placeholder kinds
INPUT, PARAMETER, BUFFER, CONSTANT, GRAD_OUTPUT = (
    "input", "parameter", "buffer", "constant", "grad_output")


@dataclass
class Value:
    """A buffer or a view. strides and offset are in elements; base is the value id
    of the storage a view aliases (None: its own storage)."""
    id: int
    shape: tuple
    dtype: str
    strides: tuple
    offset: int
    device: str
    base: int | None = None

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass
class Scalar:
    """A non-tensor argument of a node (None, a Python number, a string)."""
    value: Any


@dataclass
class Ref:
    """A tensor passed as a keyword parameter (batch_norm's running_mean)."""
    value: int


@dataclass
class Placeholder:
    """A value that exists before the graph runs. name: "args[0]", "kwargs['x']",
    "fc1.weight", "const3", "grad[0]"; data: the host values of a constant (numpy),
    taken when it was first seen; source: where a constant was made."""
    value: int
    kind: str
    name: str
    data: Any = field(default=None, repr=False)
    handle: Any = field(default=None, repr=False, compare=False)   # the live handle
    splat: bool = False            # a constant whose elements are all data.flat[0]
    source: str = ""
    # a constant made inside the call from host data (torch.tensor([...])): a replay
    # starts it from these values; any other constant is memory from before the call,
    # read and written where it lives
    inside: bool = False


@dataclass
class Node:
    """One call. op: the kernel's op name ("add", "linear"), a memory method ("empty",
    "as_strided", "copy_", "fill_"), a composite's name or "random". inputs: value
    ids, Scalar for non-tensor arguments. params: the call's keyword parameters
    (tensors among them as Ref). parent: the enclosing COMPOSITE node's id.
    phase: "forward" or "backward". source: the user line that led to the call."""
    id: int
    op: str
    kind: str
    inputs: tuple
    outputs: tuple
    params: dict
    phase: str = "forward"
    parent: int | None = None
    source: str = ""
    inplace: bool = False    # writes a buffer that existed before it (not a fresh `empty`)


@dataclass
class GraphBreak:
    """A data-dependent call (the host needed a value): the graph cannot replay past it."""
    op: str
    reason: str
    source: str
    at_node: int
    value: int | None = None      # the value the host read (to_host), where there is one
    frames: tuple = ()            # the package functions that asked, innermost first
                                  # ("ops/gather_scatter.py:check_index", ...)


@dataclass
class Check:
    """A validating host read recorded as what it checks: it passes when every
    element of integer value `value` lies in [low, high), and raises error(bad index)
    otherwise (elements equal to `ignore`, when set, are exempt). It ran before node
    at_node of the graph, so a replay checks again at the same point instead of
    breaking the graph there."""
    value: int
    low: int
    high: int
    error: Any = field(repr=False, compare=False)
    at_node: int = 0
    phase: str = "forward"
    source: str = ""
    ignore: int | None = None


@dataclass
class Graph:
    values: dict = field(default_factory=dict)          # id -> Value
    placeholders: list = field(default_factory=list)    # [Placeholder]
    nodes: list = field(default_factory=list)           # [Node], in the order they ran
    outputs: list = field(default_factory=list)         # value ids of the forward outputs
    output_spec: Any = None     # the outputs' structure (see capture.unflatten)
    grad_inputs: list = field(default_factory=list)     # [(placeholder name, value id | None)]
    breaks: list = field(default_factory=list)          # [GraphBreak]
    # [Check]: argument checks kept (not compared or saved by export: plain code, not data)
    checks: list = field(default_factory=list, compare=False)
    # [GraphBreak]: numpy arrays shared into tensors inside the call (from_numpy): the
    # graph holds this call's values; a compiled replay must not (export bakes them)
    shared_arrays: list = field(default_factory=list, compare=False)
    grad_mode: bool = True
    # {placeholder name: tensor}: tensors that require grad which the call read without
    # taking them as arguments or parameters, made parameters "closed[i]" (trace(lift=))
    lifted: dict = field(default_factory=dict, compare=False)

    # -- lookups ------------------------------------------------------------------------
    def placeholder(self, name):
        for p in self.placeholders:
            if p.name == name:
                return p
        raise KeyError(name)

    def forward_nodes(self):
        return [n for n in self.nodes if n.phase == "forward"]

    def backward_nodes(self):
        return [n for n in self.nodes if n.phase == "backward"]

    def prim_nodes(self, phase=None):
        """The nodes a replay runs: kernels, memory calls and random draws (a composite
        node is only a marker over its children)."""
        return [n for n in self.nodes if n.kind != COMPOSITE and (phase is None or n.phase == phase)]

    def whole_nodes(self, phase=None):
        """The nodes with composites kept whole (their children dropped), as an exporter
        wants them."""
        return [n for n in self.nodes if n.parent is None and (phase is None or n.phase == phase)]

    def kernel_counts(self, phase=None):
        counts = {}
        for n in self.prim_nodes(phase):
            if n.kind == KERNEL:
                counts[n.op] = counts.get(n.op, 0) + 1
        return counts

    # -- printing -----------------------------------------------------------------------
    def pretty(self, composites=True, empty=False) -> str:
        """The graph as text; composites=False hides composite markers, True indents
        their children under them; empty=True shows the allocations too."""
        lines = []
        for p in self.placeholders:
            v = self.values[p.value]
            extra = ""
            if p.data is not None and (p.splat or p.data.size == 1):
                extra = f" = {p.data.flat[0].item()!r}"
            lines.append(f"%{p.value}: {p.kind} {p.name} {_meta(v)}{extra}")
        depth = {}
        phase = None
        for n in self.nodes:
            if (not composites and n.kind == COMPOSITE) or (not empty and n.op == "empty"):
                continue
            if n.phase != phase:
                phase = n.phase
                lines.append(f"-- {phase}")
            d = depth.get(n.parent, -1) + 1 if composites and n.parent is not None else 0
            depth[n.id] = d
            lines.append("  " * (d + 1) + self._node_line(n))
        for c in self.checks:
            lines.append(f"check before node {c.at_node}: {c.low} <= %{c.value} < {c.high} "
                         f"({c.source})")
        for b in self.breaks:
            lines.append(f"graph break at node {b.at_node}: {b.op}: {b.reason} ({b.source})")
        lines.append("return " + ", ".join(f"%{o}" for o in self.outputs))
        if self.grad_inputs:
            lines.append("grads " + ", ".join(f"{name}: " + ("None" if v is None else f"%{v}")
                                              for name, v in self.grad_inputs))
        return "\n".join(lines)

    def _node_line(self, n):
        args = ", ".join(_arg(a) for a in n.inputs)
        params = ", ".join(f"{k}={_param(v)}" for k, v in n.params.items() if not k.startswith("_"))
        if params:
            args = f"{args}, {params}" if args else params
        outs = ", ".join(f"%{o}" for o in n.outputs)
        meta = "; ".join(_meta(self.values[o]) for o in n.outputs)
        mark = " (in place)" if n.inplace else ""
        return f"{outs} = {n.op}({args}){mark}  # {meta}"


def _meta(v):
    geom = "" if v.base is None else f" view of %{v.base} strides={v.strides} offset={v.offset}"
    return f"{v.dtype}{list(v.shape)} {v.device}{geom}"


def _arg(a):
    if isinstance(a, Scalar):
        return repr(a.value)
    return f"%{a}"


def _param(v):
    if isinstance(v, Ref):
        return f"%{v.value}"
    if callable(v):
        return getattr(v, "__qualname__", "fn")
    return repr(v)
