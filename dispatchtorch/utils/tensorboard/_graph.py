"""add_graph's GraphDef from dispatchtorch's graph capture (_capture.trace: the model
runs once, eagerly, in eval mode under no_grad, its kernel calls recorded in order),
where PyTorch uses a TorchScript trace. Nodes: "input/<forward's argument>" and
"output/out[i]" (op "IO Node"), parameters, buffers and constants by module scope,
and one node per call (composites whole, allocations dropped) named <scope>/<op>_<k>,
its output shape in _output_shapes and its non-tensor arguments in "attr". Scopes are
PyTorch's (Sequential/Linear[0]); names and ops are not (TorchScript's value names,
prim::GetAttr nodes, aten:: ops); the edges are the data flow, writes into views
included."""
from __future__ import annotations

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ... import _capture      # a tool over models: pyproject's layers allow this import
from ...autograd.grad_mode import no_grad


def _node(name, op, inputs, shape=None, attr=""):
    attrs = {"attr": AttrValue(s=attr.encode("utf_8"))}
    if shape is not None:
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(
            dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])]))
    return NodeDef(name=name, op=op, input=inputs, attr=attrs)


def _scopes(model):
    """{module: scope} as PyTorch names them: the root's class, then Class[attr] per level."""
    root = type(model).__name__
    scopes = {}
    for path, mod in model.named_modules():
        parts, sub = [root], model
        for attr in path.split(".") if path else []:
            sub = getattr(sub, attr)
            parts.append(f"{type(sub).__name__}[{attr}]")
        scopes[mod] = "/".join(parts)
    return scopes


def _traced(model, args):
    """The captured graph and, per node index, the scope of the module it ran in."""
    scopes, stack, marks = _scopes(model), [], []

    def enter(mod, _):
        stack.append(scopes[mod])
        marks.append((len(_capture.current().graph.nodes), stack[-1]))

    def leave(mod, _, __):
        stack.pop()
        marks.append((len(_capture.current().graph.nodes), stack[-1] if stack else ""))

    handles = [h for m in scopes for h in (m.register_forward_pre_hook(enter),
                                           m.register_forward_hook(leave))]
    training = model.training
    model.train(False)
    try:
        with no_grad():
            g, _ = _capture.trace(model, args)
    finally:
        model.train(training)
        for h in handles:
            h.remove()
    at, k, scope = [], 0, ""
    for i in range(len(g.nodes)):
        while k < len(marks) and marks[k][0] <= i:
            scope = marks[k][1]
            k += 1
        at.append(scope)
    return g, at, scopes[model]


def _input_name(model, name):
    """args[1][0] -> <forward's second parameter>[0], as PyTorch names inputs."""
    import inspect
    import re
    m = re.fullmatch(r"args\[(\d+)\](.*)", name)
    params = [p.name for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return params[int(m[1])] + m[2] if m and int(m[1]) < len(params) else name


def _storage(g, v):
    base = g.values[v].base
    return v if base is None else base


def _last_write(writer, g, v):
    """The node that last wrote value v: its own writer or, if later, its storage's."""
    found = [w for w in (writer.get(v), writer.get(_storage(g, v))) if w is not None]
    return max(found)[1] if found else None


def graph(model, args, verbose=False):
    """(GraphDef, RunMetadata) as PyTorch's graph() returns them (device CPU:0 there too)."""
    if args is None:                             # PyTorch's trace error
        raise RuntimeError("example_kwarg_inputs should be a dict")
    args = args if isinstance(args, (tuple, list)) else (args,)
    g, at, root = _traced(model, tuple(args))
    if g.breaks:
        b = g.breaks[0]
        print("Error occurs, No graph saved")
        raise RuntimeError(f"add_graph: the model's forward depends on tensor values "
                           f"({b.op}: {b.reason}, at {b.source}); it has no static graph")
    if verbose:
        print(g.pretty())
    nodes, writer = [], {}
    for p in g.placeholders:
        v = g.values[p.value]
        if p.kind == _capture.INPUT:
            name = "input/" + _input_name(model, p.name)
        else:                                    # fc.weight -> Sequential/Linear[fc]/weight
            *path, leaf = p.name.split(".")
            mod, parts = model, [root]
            for attr in path:
                mod = getattr(mod, attr)
                parts.append(f"{type(mod).__name__}[{attr}]")
            name = "/".join(parts + [leaf])
        writer[p.value] = (-1, name)
        value = "" if p.data is None or not (p.splat or p.data.size == 1) else \
            f", value : {p.data.flat[0].item()!r}"
        op = "IO Node" if p.kind == _capture.INPUT else p.kind.capitalize()
        nodes.append(_node(name, op, [], v.shape, f"{{ dtype : {v.dtype}{value} }}"))
    index = {n.id: i for i, n in enumerate(g.nodes)}
    for k, n in enumerate(x for x in g.whole_nodes("forward") if x.op != "empty"):
        name = f"{at[index[n.id]] or root}/{n.op}_{k}"
        scalar = [isinstance(a, _capture.Scalar) for a in n.inputs]
        inputs = [_last_write(writer, g, a) for a, s in zip(n.inputs, scalar) if not s]
        args = [f"{i} : {a.value!r}" for i, (a, s) in enumerate(zip(n.inputs, scalar)) if s]
        args += [f"{key} : {val!r}" for key, val in n.params.items()
                 if not key.startswith("_") and not callable(val)]
        nodes.append(_node(name, n.op, [i for i in inputs if i is not None],
                           g.values[n.outputs[0]].shape if n.outputs else None,
                           "{" + ", ".join(args) + "}"))
        for o in n.outputs:                    # a write into a view writes its storage
            writer[o] = writer[_storage(g, o)] = (k, name)
    for i, o in enumerate(g.outputs):
        nodes.append(_node(f"output/out[{i}]", "IO Node", [_last_write(writer, g, o)],
                           g.values[o].shape))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
