"""Build an ONNX graph node by node: unique names, deduplicated constants, and the
int64 shape tensors of sizes that follow dynamic axes (computed at run time from the
inputs' shapes)."""
from __future__ import annotations

import numpy as np

from ..export._symbolic import SymInt
from .errors import UnsupportedOpError  # noqa: F401  (raised by the converters)

# dispatchtorch dtype name -> ONNX TensorProto element type
ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7,
              "bool": 9, "float16": 10, "float64": 11, "bfloat16": 16}
NUMPY_TYPES = {"float32": np.float32, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
               "int32": np.int32, "int64": np.int64, "bool": np.bool_, "float16": np.float16,
               "float64": np.float64}
FLOATS = ("float16", "bfloat16", "float32", "float64")


class Builder:
    def __init__(self, onnx, opset, fold=True):
        self.onnx = onnx
        self.fold = fold            # fold transposes and casts of constants
        self.helper = onnx.helper
        self.opset = opset
        self.nodes = []
        self.initializers = []      # TensorProto
        self._names = set()
        self._consts = {}           # (dtype, shape, bytes) -> name
        self._init_arrays = {}      # name -> numpy (what constant folding may read)
        self.sym_sources = {}       # symbol -> (graph input name, axis)
        self._sym_names = {}        # symbol -> name of its 1-D int64 size tensor

    # -- names ------------------------------------------------------------------------------
    def fresh(self, hint):
        hint = "".join(c if c.isalnum() or c in "_./" else "_" for c in hint) or "v"
        name, i = hint, 1
        while name in self._names:
            name, i = f"{hint}_{i}", i + 1
        self._names.add(name)
        return name

    def reserve(self, name):
        self._names.add(name)
        return name

    # -- nodes ------------------------------------------------------------------------------
    def op(self, op_type, inputs, n_out=1, name_hint=None, **attrs):
        """Append one node; returns its output name (or the list of them)."""
        outs = [self.fresh(name_hint or op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs,
                                                name=self.fresh("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def initializer(self, name, array):
        self.reserve(name)
        array = np.ascontiguousarray(array)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        self._init_arrays[name] = array
        return name

    def const(self, array, dtype=None, hint="const"):
        """A constant (an initializer), shared between equal uses."""
        array = np.asarray(array, dtype=NUMPY_TYPES[dtype] if dtype else None)
        key = (array.dtype.str, array.shape, array.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._consts[key] = self.initializer(self.fresh(hint), array)
        return name

    def constant_value(self, name):
        """The numpy value of an initializer, or None (for constant folding)."""
        return self._init_arrays.get(name)

    def int64s(self, values):
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), hint="ints")

    # -- sizes ------------------------------------------------------------------------------
    def symbol_size(self, sym):
        """The 1-D int64 tensor [size] of a dynamic axis, read from the input it came from."""
        name = self._sym_names.get(sym)
        if name is None:
            src, axis = self.sym_sources[sym]
            name = self._sym_names[sym] = self.op("Shape", [src], name_hint=sym, start=axis,
                                                  end=axis + 1)
        return name

    def size_tensor(self, d):
        """A 1-D int64 tensor [d] for an int or a SymInt."""
        if not isinstance(d, SymInt):
            return self.int64s([int(d)])
        acc = None
        for mono, c in sorted(d.terms.items()):
            if not mono:
                term = self.int64s([c])
            else:
                term = self.symbol_size(mono[0])
                for s in mono[1:]:
                    term = self.op("Mul", [term, self.symbol_size(s)])
                if c != 1:
                    term = self.op("Mul", [term, self.int64s([c])])
            acc = term if acc is None else self.op("Add", [acc, term])
        return acc

    def shape_tensor(self, dims, for_reshape=False):
        """A 1-D int64 tensor of sizes. for_reshape: a single symbolic size becomes -1
        (Reshape infers it), which keeps simple graphs simple."""
        sym = [i for i, d in enumerate(dims) if isinstance(d, SymInt)]
        if not sym:
            return self.int64s([int(d) for d in dims])
        if for_reshape and len(sym) == 1:
            return self.int64s([-1 if i == sym[0] else int(d) for i, d in enumerate(dims)])
        parts, static = [], []
        for d in dims:
            if isinstance(d, SymInt):
                if static:
                    parts.append(self.int64s(static))
                    static = []
                parts.append(self.size_tensor(d))
            else:
                static.append(int(d))
        if static:
            parts.append(self.int64s(static))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

    # -- helpers used by many ops ---------------------------------------------------------------
    def cast(self, x, src, dst):
        if src == dst:
            return x
        arr = self.constant_value(x) if self.fold else None
        if arr is not None:                         # fold casts of constants
            return self.const(arr.astype(NUMPY_TYPES[dst]), hint="const")
        return self.op("Cast", [x], to=ONNX_TYPES[dst])

    def reshape(self, x, shape):
        return self.op("Reshape", [x, self.shape_tensor(shape, for_reshape=True)])

    def reduce(self, op_type, x, axes, keepdims):
        """ReduceSum takes axes as an input from opset 13, the other reductions from 18."""
        axes = [int(a) for a in axes]
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [x, self.int64s(axes)], keepdims=int(keepdims))
        return self.op(op_type, [x], axes=axes, keepdims=int(keepdims))

    def squeeze(self, x, axes):
        return self.op("Squeeze", [x, self.int64s(axes)]) if axes else x

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", [x, self.int64s(axes)]) if axes else x
