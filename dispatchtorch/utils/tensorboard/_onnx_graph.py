"""add_onnx_graph: an ONNX model file as a GraphDef, as PyTorch's: its inputs and outputs
as Variable nodes (ONNX element type and shape in attrs), then one node per ONNX op,
named by its first output, its attributes as one "parameters" string."""
from __future__ import annotations

import itertools

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef


def load_onnx_graph(fname):
    import onnx
    return parse(onnx.load(fname).graph)


def parse(graph):
    nodes = []
    for v in itertools.chain(graph.input, graph.output):
        t = v.type.tensor_type
        shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value)
                                      for d in t.shape.dim])
        nodes.append(NodeDef(name=v.name.encode("utf_8"), op="Variable", input=[], attr={
            "dtype": AttrValue(type=t.elem_type), "shape": AttrValue(shape=shape)}))
    for node in graph.node:
        params = ", ".join(" = ".join(str(f[1]) for f in a.ListFields()) for a in node.attribute)
        nodes.append(NodeDef(name=node.output[0].encode("utf_8"), op=node.op_type,
                             input=node.input,
                             attr={"parameters": AttrValue(s=params.encode("utf_8"))}))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
