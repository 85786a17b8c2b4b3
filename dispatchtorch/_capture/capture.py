"""capture(fn, *args): run fn once eagerly under a Tracer and return its Graph."""
from __future__ import annotations

from .._tensor import Tensor
from .graph import BUFFER, CONSTANT, GRAD_OUTPUT, INPUT, PARAMETER, Placeholder
from .tracer import OPTIMIZER_STEP, Tracer


def flatten(obj, prefix="out"):
    """(tensor leaves, spec, names): spec rebuilds obj from the leaves (unflatten);
    non-tensor leaves are kept in the spec as they are."""
    leaves, names = [], []

    def go(x, name):
        if isinstance(x, Tensor):
            leaves.append(x)
            names.append(name)
            return ("T", len(leaves) - 1)
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return ("N", type(x), tuple(go(v, f"{name}.{f}") for f, v in zip(x._fields, x)))
        if isinstance(x, (tuple, list)):
            return ("L" if isinstance(x, list) else "U",
                    tuple(go(v, f"{name}[{i}]") for i, v in enumerate(x)))
        if isinstance(x, dict):
            return ("D", tuple((k, go(v, f"{name}[{k!r}]")) for k, v in x.items()))
        return ("C", x)

    spec = go(obj, prefix)
    return leaves, spec, names


def unflatten(spec, leaves):
    kind = spec[0]
    if kind == "T":
        return leaves[spec[1]]
    if kind == "N":
        return spec[1](*(unflatten(s, leaves) for s in spec[2]))
    if kind == "L":
        return [unflatten(s, leaves) for s in spec[1]]
    if kind == "U":
        return tuple(unflatten(s, leaves) for s in spec[1])
    if kind == "D":
        return {k: unflatten(s, leaves) for k, s in spec[1]}
    return spec[1]


def module_tensors(fn):
    """{name: (tensor, kind)} of a Module's (or a bound method's module's) parameters
    and buffers; {} for a plain function."""
    from ..nn.modules.module import Module
    mod = fn if isinstance(fn, Module) else getattr(fn, "__self__", None)
    if not isinstance(mod, Module):
        return {}
    named = {n: (p, PARAMETER) for n, p in mod.named_parameters()}
    for n, b in mod.named_buffers():
        if b is not None:
            named.setdefault(n, (b, BUFFER))
    return named


def trace(fn, args=(), kwargs=None, *, named=None, backward=False, lift=None):
    """Run fn(*args, **kwargs) eagerly, recording; returns (graph, outputs).

    named: {name: tensor or (tensor, kind)} registered as parameters before the call
    (default: fn's module's parameters and buffers). backward=True also records the
    backward autograd runs for the floating outputs that require grad, with
    placeholder incoming gradients "grad[i]" (ones when captured) and
    graph.grad_inputs naming each input/parameter that requires grad and its
    gradient's value. The eager graph is retained: the outputs can be differentiated.
    lift: None, or the first index of the names "closed[i]" given to the tensors
    lifted from constants to parameters (_lift_closed_over); a lifted tensor makes the
    backward recorded whatever `backward` says.
    """
    kwargs = kwargs or {}
    named = module_tensors(fn) if named is None else {
        k: (v if isinstance(v, tuple) else (v, PARAMETER)) for k, v in named.items()}
    in_leaves, _, in_names = flatten((tuple(args), kwargs), "in")
    with Tracer() as tr:
        for t, name in zip(in_leaves, in_names):
            tr.add_input(t, INPUT, _input_name(name))
        for name, (t, kind) in named.items():
            tr.add_input(t, kind, name)
        if _is_optimizer_step(fn):          # (bound before the tracer wrapped the step)
            tr.graph_break(OPTIMIZER_STEP)
        out = fn(*args, **kwargs)
        leaves, spec, _ = flatten(out)
        g = tr.graph
        g.outputs = [tr._arg(t, str(t._place.device)) for t in leaves]
        g.output_spec = spec
        if lift is not None and not g.breaks:
            _lift_closed_over(tr, leaves, lift)
        if (backward or g.lifted) and not g.breaks:     # (a broken graph runs eagerly)
            _trace_backward(tr, leaves)
    return tr.graph, out


def capture(fn, *args, **kwargs):
    """The forward graph of fn(*args, **kwargs) and its outputs (see trace)."""
    return trace(fn, args, kwargs)


def _input_name(flat):
    # "in[0][1]" -> "args[1]", "in[1]['x']" -> "kwargs['x']"
    if flat.startswith("in[0]"):
        return "args" + flat[5:]
    return "kwargs" + flat[5:]


def _is_optimizer_step(fn):
    from ..optim.optimizer import Optimizer
    return isinstance(getattr(fn, "__self__", None), Optimizer) and \
        getattr(fn, "__name__", "") == "step"


def _lift_closed_over(tr, leaves, start):
    """Make parameters of the constants that are leaf tensors requiring grad (a model's
    weights read through a closure or a global): as constants, a replay would return
    outputs whose gradient never reaches them. A tensor that requires grad reached only
    through the history of a tensor made before the call (a non-leaf read from a
    closure) breaks the graph: its gradient path is not in the graph's values."""
    from ..autograd.graph import leaves_reached
    g = tr.graph
    consts = {p.value: i for i, p in enumerate(g.placeholders) if p.kind == CONSTANT}
    registered = {id(t) for t in tr.tensors.values()}
    # (a closed-over leaf may be returned as it is: a root of its own)
    roots = [t._grad_fn if t._grad_fn is not None else t for t in leaves
             if t._grad_fn is not None or t._rg]
    # the histories of the arguments: their gradients leave the graph there (as inputs)
    stop = [id(t._grad_fn) for t in tr.tensors.values() if t._grad_fn is not None]
    found, hidden = [], []
    for x in leaves_reached(roots, stop + list(registered)):
        vid = tr.ids.get(id(x._h))
        if vid in consts:
            found.append((vid, x))
        elif vid is None:                   # never read by the call's kernels
            hidden.append(x)
    for k, (vid, t) in enumerate(found, start):
        name = f"closed[{k}]"
        g.placeholders[consts[vid]] = Placeholder(vid, PARAMETER, name)
        tr.tensors[name] = t
        g.lifted[name] = t
    if hidden:
        tr.graph_break(f"the output's gradient reaches {len(hidden)} tensor(s) that require grad "
                       "only through a tensor computed before the call (a non-leaf read from a "
                       "closure or a global): pass that tensor as an argument")


def _trace_backward(tr, leaves):
    from ..autograd import grad
    from ..ops import ones_like
    targets = [t for t in leaves if t._rg and t._dtype.is_floating_point]
    wrt = [(name, t) for name, t in tr.tensors.items() if t._rg and not name.endswith(".storage")]
    if not targets or not wrt:
        return
    if _history_reaches(wrt):
        tr.graph_break("the history of an input that requires grad reaches another input or "
                       "parameter of the graph (a tied weight used before the call): the "
                       "recorded backward would count that path twice")
        return
    tr.depth += 1
    try:
        gouts = [ones_like(t) for t in targets]
    finally:
        tr.depth -= 1
    for i, g in enumerate(gouts):
        tr.add_input(g, GRAD_OUTPUT, f"grad[{i}]")
    tr.phase = "backward"
    grads = grad(targets, [t for _, t in wrt], grad_outputs=gouts, retain_graph=True,
                 allow_unused=True)
    tr.graph.grad_inputs = [(name, None if g is None else tr._arg(g, str(g._place.device)))
                            for (name, _), g in zip(wrt, grads)]
    tr.graph.grad_targets = [tr.ids[id(t._h)] for t in targets]


def _history_reaches(wrt):
    """Whether the autograd history of one of the non-leaf tensors in wrt reaches
    another tensor of wrt (a leaf, or a non-leaf's node)."""
    from ..autograd.graph import Node
    leaves, nodes, starts = set(), set(), []
    for _, t in wrt:
        fn = t.grad_fn
        if fn is None:
            leaves.add(id(t))
        else:
            nodes.add(id(fn))
            starts.append(fn)
    seen, stack = set(), []
    for fn in starts:
        stack.extend(e[0] for e in getattr(fn, "next", ()) if e is not None)
    while stack:
        x = stack.pop()
        if not isinstance(x, Node):
            if id(x) in leaves:
                return True
            continue
        if id(x) in seen:
            continue
        if id(x) in nodes:
            return True
        seen.add(id(x))
        stack.extend(e[0] for e in x.next if e is not None)
    return False
