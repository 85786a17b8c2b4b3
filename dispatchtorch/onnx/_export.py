"""dispatchtorch.onnx.export: torch.onnx.export's interface over dispatchtorch.export."""
from __future__ import annotations

import contextlib
import enum
import os

import numpy as np

from .. import _capture as C
from .._tensor import Tensor
from ._builder import ONNX_TYPES, Builder
from ..export._dynamic import SymConst
from ._convert import Converter, prune, value_info

DEFAULT_OPSET = 17
# Tested with onnxruntime 1.32; 17 is the first with LayerNormalization, 21 the newest
# whose IR version (10) the onnxruntime releases of 2024-2026 all read.
SUPPORTED_OPSETS = range(17, 22)


def require_onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("dispatchtorch.onnx needs the 'onnx' package: pip install onnx "
                          "onnxruntime (or pip install dispatchtorch[onnx])") from None
    return onnx


_exporting = [False]      # torch.onnx.is_in_onnx_export()'s answer


def is_in_onnx_export():
    """Whether a forward is running under torch.onnx.export (models branch on it to
    leave out what has no ONNX form)."""
    return _exporting[0]


class TrainingMode(enum.IntEnum):
    """torch.onnx.TrainingMode: the mode the model is exported in."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def export(model, args=(), f=None, kwargs=None, export_params=True, verbose=False,
           training=TrainingMode.EVAL, input_names=None, output_names=None,
           opset_version=None, dynamic_axes=None, do_constant_folding=True):
    """Write `model`'s forward as an ONNX model to f (a path or a binary file object).
    Keywords as torch.onnx.export: input_names / output_names name the graph's inputs
    and outputs (default "input0"..., "output0"...); dynamic_axes {name: {axis: "dim
    name"} or [axis, ...]} makes those axes symbolic; opset_version is 17 to 21
    (default 17); training: the mode to export in (default eval); export_params=False
    makes the weights graph inputs; do_constant_folding folds transposes and casts of
    the weights into new initializers; verbose prints the ONNX graph. Returns None."""
    onnx = require_onnx()
    from ..export import Dim, export as capture_program
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in SUPPORTED_OPSETS:
        raise ValueError(f"onnx.export: opset_version {opset} is not supported (supported: "
                         f"{SUPPORTED_OPSETS.start} to {SUPPORTED_OPSETS.stop - 1})")
    if f is None:
        raise ValueError("onnx.export: f (the file to write) is required")
    training = TrainingMode(training)
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):           # torch.onnx: a trailing dict is kwargs
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    n_in = len(args) + len(kwargs)
    in_names = _names(input_names, n_in, "input", "input_names")
    dynamic_axes = dict(dynamic_axes or {})
    known = set(in_names) | set(output_names or ())
    unknown = [k for k in dynamic_axes if k not in known]
    if unknown:
        raise ValueError(f"onnx.export: dynamic_axes names {unknown}, which are neither "
                         f"input_names nor output_names")
    dims = {}
    for i, name in enumerate(in_names):
        axes = _axes(dynamic_axes.get(name), name)
        if axes:
            dims[i] = {a: Dim(_ident(n)) for a, n in axes.items()}
    with select_model_mode_for_export(model, training), _marked_exporting():
        ep = capture_program(model, args, kwargs,
                             dynamic_shapes=[dims.get(i) for i in range(n_in)] if dims else None)
    proto = to_onnx(ep, in_names, output_names, dynamic_axes, opset, do_constant_folding,
                    export_params, onnx)
    if verbose:
        import onnx.printer
        print(onnx.printer.to_text(proto.graph))
    data = proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)
    return None


@contextlib.contextmanager
def _marked_exporting():
    was, _exporting[0] = _exporting[0], True
    try:
        yield
    finally:
        _exporting[0] = was


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """torch.onnx.select_model_mode_for_export (deprecated in PyTorch 2.7, without a
    warning): model.train(mode) inside the block, its own mode restored after
    (PRESERVE changes nothing)."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    was_training = getattr(model, "training", False)
    if hasattr(model, "training") and mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if hasattr(model, "training") and mode != TrainingMode.PRESERVE:
            model.train(was_training)


def _names(names, n, prefix, what):
    if names is None:
        return [f"{prefix}{i}" for i in range(n)]
    names = list(names)
    if len(names) > n:
        raise ValueError(f"onnx.export: {len(names)} {what} for {n} tensors")
    return names + [f"{prefix}{i}" for i in range(len(names), n)]


def _axes(spec, name):
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(a): str(n) for a, n in spec.items()}
    return {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(spec)}


def _ident(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return s if s and not s[0].isdigit() else "d_" + s


def _sym_constant(b, conv, c):
    """A constant that follows dynamic sizes, computed from them."""
    dt = {np.dtype(k).str: k for k in ONNX_TYPES if k != "bfloat16"}[np.dtype(c.dtype).str]
    if c.kind == "full":
        return conv.fill(c.size, dt, c.value)
    if c.kind == "scalar":
        n = b.op("Squeeze", [b.size_tensor(c.value), b.int64s([0])])
    else:
        # arange(n) as a running count of ones: onnxruntime 1.32's GatherToSliceFusion
        # breaks a Gather of a Range with a computed limit (the embedding of positions)
        ones = conv.fill(c.size, "int64", 1)
        n = b.op("Sub", [b.op("CumSum", [ones, b.const(np.asarray(0, np.int64))]),
                         b.const(np.asarray(1, np.int64))])
    return b.cast(n, "int64", dt)


def to_onnx(ep, input_names, output_names, dynamic_axes, opset, fold, export_params, onnx):
    """The ExportedProgram as an onnx.ModelProto (checked by onnx.checker)."""
    g = ep.graph
    b = Builder(onnx, opset, fold)
    conv = Converter(g, b)
    inputs, user = [], {}
    for name, pname in zip(input_names, ep.input_names):
        user[pname] = b.reserve(name)
    for sym, where in ep.dynamic.items():
        pos, axis = where[0]
        b.sym_sources[sym] = (user[ep.input_names[pos]], axis)
    for p in g.placeholders:
        if p.name.endswith(".storage"):
            raise NotImplementedError(f"onnx.export: {p.name[:-8]} is a view of another "
                                      "tensor's storage; pass a contiguous tensor")
        v = g.values[p.value]
        if p.kind == C.INPUT:
            name = user[p.name]
            inputs.append(value_info(b, name, v.dtype, v.shape))
        elif p.kind in (C.PARAMETER, C.BUFFER):
            name = b.fresh(p.name)
            array = ep.state_dict[p.name].detach().cpu().numpy() if p.name in ep.state_dict \
                else None
            if export_params and array is not None:
                b.initializer(name, array)
            else:
                inputs.append(value_info(b, name, v.dtype, v.shape))
        elif p.kind == C.CONSTANT and isinstance(p.data, SymConst):
            name = _sym_constant(b, conv, p.data)
        elif p.kind == C.CONSTANT:
            name = b.const(np.asarray(p.data), hint=p.name)
        else:
            raise NotImplementedError(f"onnx.export: placeholder {p.name} ({p.kind})")
        conv.write(p.value, name)
    conv.run(g.whole_nodes("forward"))
    out_names = _names(output_names, len(g.outputs), "output", "output_names")
    outputs = []
    for name, vid in zip(out_names, g.outputs):
        v = g.values[vid]
        x = conv.read(vid)
        b.reserve(name)
        b.nodes.append(b.helper.make_node("Identity", [x], [name], name=b.fresh("n_out")))
        shape = list(v.shape)
        for a, dim_name in _axes(dynamic_axes.get(name), name).items():
            shape[a] = dim_name
        outputs.append(b.helper.make_tensor_value_info(
            name, ONNX_TYPES[v.dtype], [d if isinstance(d, (int, str)) else str(d)
                                        for d in shape]))
    nodes, needed = prune(b.nodes, out_names)
    inits = [t for t in b.initializers if t.name in needed]
    used_inputs = [i for i in inputs if i.name in needed or i.name in user.values()]
    graph = b.helper.make_graph(nodes, "dispatchtorch", used_inputs, outputs, inits)
    model = b.helper.make_model(graph, producer_name="dispatchtorch",
                                opset_imports=[b.helper.make_opsetid("", opset)],
                                ir_version=b.helper.find_min_ir_version_for(
                                    [b.helper.make_opsetid("", opset)]))
    onnx.checker.check_model(model, full_check=True)
    return model
