"""A captured forward graph (dispatchtorch._capture.Graph) as an ONNX ModelProto.

The graph is a sequence of writes into buffers; ONNX is single-assignment. The
converter keeps, per storage (a root value), the ONNX value holding its current
contents; a node reading a view gets it from `_views.read_view`, a node writing
a whole storage rebinds it, a write into part of one is a scatter. Composites the
capture kept whole (linear, conv2d, softmax, layer_norm, attention ...) map to one
ONNX op or a short pattern (`_ops.OPS`); their decompositions are skipped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..export._symbolic import SymInt
from . import _views as V
from ._builder import NUMPY_TYPES, ONNX_TYPES, Builder, UnsupportedOpError
from ._ops import OPS


@dataclass
class Call:
    """One node as the op table sees it."""
    op: str
    ins: list
    in_dtypes: list
    in_shapes: list
    params: dict
    out_dtypes: list
    out_shapes: list
    source: str = ""


@dataclass
class _Storage:
    name: str | None          # the ONNX value holding the contents (root shape), or None
    version: int = 0


@dataclass
class Converter:
    graph: object
    b: Builder
    storages: dict = field(default_factory=dict)      # root value id -> _Storage
    bound: dict = field(default_factory=dict)         # value id -> (name, root version)
    children: dict = field(default_factory=dict)      # composite node id -> its nodes

    def __post_init__(self):
        for n in self.graph.nodes:
            if n.parent is not None and n.phase == "forward":
                self.children.setdefault(n.parent, []).append(n)

    # -- reading and writing values -------------------------------------------------------
    def root_of(self, vid):
        v = self.graph.values[vid]
        return vid if v.base is None else v.base

    def read(self, vid):
        v = self.graph.values[vid]
        root = self.root_of(vid)
        st = self.storages.get(root)
        got = self.bound.get(vid)
        if got is not None and (st is None or got[1] == st.version):
            return got[0]
        if st is None or st.name is None:
            raise UnsupportedOpError(f"export: value %{vid} is read before it is written")
        if root == vid:
            return st.name
        r = self.graph.values[root]
        name = V.read_view(self.b, st.name, r.shape, v.shape, v.strides, v.offset)
        self.bound[vid] = (name, st.version)
        return name

    def write(self, vid, name, whole=False):
        """Store `name` (the value's logical contents) into value vid. whole: a composite's
        output, which may be a view of a buffer nothing else sees."""
        v = self.graph.values[vid]
        root = self.root_of(vid)
        st = self.storages.setdefault(root, _Storage(None))
        if root == vid:
            st.name, st.version = name, st.version + 1
            self.bound.pop(vid, None)
            return
        r = self.graph.values[root]
        covers = V.same_shape(v.strides, V.contiguous(v.shape)) and V.same(v.offset, 0) \
            and V.same(V.numel(v.shape), V.numel(r.shape))
        if covers:
            st.name = name if V.same_shape(v.shape, r.shape) else self.b.reshape(name, r.shape)
            st.version += 1
        elif whole and st.name is None:
            pass                                  # only this view of the buffer is ever read
        else:
            current = st.name
            if current is None:
                current = self.fill(r.shape, r.dtype, 0)
            st.name = V.write_view(self.b, current, r.shape, v.shape, v.strides, v.offset, name)
            st.version += 1
        self.bound[vid] = (name, st.version)

    def fill(self, shape, dtype, value):
        b = self.b
        tensor = b.onnx.helper.make_tensor("value", ONNX_TYPES[dtype], [1],
                                           [np.asarray(value).astype(NUMPY_TYPES[dtype]).item()])
        return b.op("ConstantOfShape", [b.shape_tensor(shape)], value=tensor)

    # -- nodes ----------------------------------------------------------------------------------
    def run(self, nodes):
        """Convert nodes in order (the graph's top-level nodes, or a composite's children)."""
        for n in nodes:
            if n.kind == "composite" and (n.op not in OPS or not self._try_whole(n)):
                self.run(self.children.get(n.id, ()))     # its decomposition instead
                continue
            try:
                self.node(n)
            except UnsupportedOpError:
                raise
            except (NotImplementedError, ValueError) as exc:
                raise UnsupportedOpError(f"export: {n.op} has no ONNX form here: {exc} "
                                         f"(called at {n.source or 'an unknown line'})") from exc

    def _try_whole(self, n):
        """Map a composite whole; False (nothing written) where its mapping declines
        these params, so that its decomposition is converted instead."""
        try:
            self.node(n)
        except NotImplementedError:
            return False
        return True

    def node(self, n):
        g, b = self.graph, self.b
        if n.op == "empty":
            self.storages[n.outputs[0]] = _Storage(None)
            return
        if n.op == "as_strided":
            return                                 # views are read lazily
        if n.op == "copy_":
            (src,), (dst,) = n.inputs, n.outputs
            x = b.cast(self.read(src), g.values[src].dtype, g.values[dst].dtype)
            self.write(dst, x if V.same_shape(g.values[src].shape, g.values[dst].shape)
                       else b.op("Expand", [x, b.shape_tensor(g.values[dst].shape)]))
            return
        if n.op == "fill_":
            (dst,) = n.outputs
            v = g.values[dst]
            self.write(dst, self.fill(v.shape, v.dtype, n.params["value"]))
            return
        fn = OPS.get(n.op)
        if fn is None:
            raise UnsupportedOpError(
                f"export: the op '{n.op}' has no ONNX mapping (called at "
                f"{n.source or 'an unknown line'}); supported: see docs/export.md")
        call = self.call(n)
        outs = fn(b, call)
        outs = [outs] if isinstance(outs, str) else list(outs)
        for vid, name in zip(n.outputs, outs):
            self.write(vid, name, whole=n.kind == "composite")

    def call(self, n):
        from .._capture import Ref, Scalar
        g = self.graph
        ins, dts, shapes = [], [], []
        for a in n.inputs:
            if isinstance(a, Scalar):
                ins.append(a.value)
                dts.append(None)
                shapes.append(None)
            else:
                ins.append(self.read(a))
                dts.append(g.values[a].dtype)
                shapes.append(g.values[a].shape)
        params = {k: (self.read(v.value) if isinstance(v, Ref) else v)
                  for k, v in n.params.items() if not k.startswith("_")}
        outs = [g.values[o] for o in n.outputs]
        return Call(n.op, ins, dts, shapes, params, [o.dtype for o in outs],
                    [o.shape for o in outs], n.source)


def value_info(b, name, dtype, shape):
    dims = [str(d) if isinstance(d, SymInt) else int(d) for d in shape]
    return b.helper.make_tensor_value_info(name, ONNX_TYPES[dtype], dims)


def prune(nodes, outputs):
    """The nodes some output depends on, in order (dead code from checks and unused views)."""
    need = set(outputs)
    keep = []
    for node in reversed(nodes):
        if any(o in need for o in node.output):
            keep.append(node)
            need.update(i for i in node.input if i)
    keep.reverse()
    return keep, need
