"""save / load of an ExportedProgram: a code-free file.

The file is a dispatchtorch checkpoint (docs/serialization.md: one safetensors file,
JSON structure in its metadata): the graph as plain data (values, placeholders,
nodes, outputs; sizes of dynamic axes as {"__sym__": ...}), the parameters, buffers
and constants as tensors. Loading builds only the graph's own dataclasses, from an
allow-list, so a file can never run code.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _capture as C
from .. import serialization
from .._tensor import Tensor
from ._dynamic import SymConst
from ._program import ExportedProgram
from ._symbolic import SymInt

FORMAT = "dispatchtorch.export"
VERSION = 1
_CLASSES = {c.__name__: c for c in (C.Graph, C.Value, C.Placeholder, C.Node, C.Scalar, C.Ref,
                                      C.GraphBreak, SymConst)}


def _to_data(obj, path):
    if isinstance(obj, SymInt):
        return {"__sym__": obj.to_data()}
    if isinstance(obj, np.ndarray):
        from .. import from_numpy
        return from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, np.generic):
        return obj.item()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        if name not in _CLASSES:
            raise TypeError(f"export.save: cannot save a {name} at {path}")
        fields = {f.name: _to_data(getattr(obj, f.name), f"{path}.{f.name}")
                  for f in dataclasses.fields(obj) if f.compare and f.init}
        return {"__dc__": name, "fields": fields}
    if isinstance(obj, dict):
        return {k: _to_data(v, f"{path}[{k!r}]") for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(_to_data(v, f"{path}[{i}]") for i, v in enumerate(obj))
    if isinstance(obj, list):
        return [_to_data(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, type):           # a namedtuple output: saved as a plain tuple
        return None
    return obj


def _from_data(obj):
    if isinstance(obj, Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        if "__sym__" in obj and len(obj) == 1:
            return SymInt.from_data(obj["__sym__"])
        if "__dc__" in obj and set(obj) == {"__dc__", "fields"}:
            cls = _CLASSES.get(obj["__dc__"])
            if cls is None:
                raise serialization.CheckpointError(f"export.load: unknown record {obj['__dc__']!r}")
            return cls(**{k: _from_data(v) for k, v in obj["fields"].items()})
        return {k: _from_data(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(_from_data(v) for v in obj)
    if isinstance(obj, list):
        return [_from_data(v) for v in obj]
    return obj


def _plain_spec(spec):
    """output_spec with namedtuples as tuples (a type cannot be saved code-free)."""
    if spec[0] == "N":
        return ("U", tuple(_plain_spec(s) for s in spec[2]))
    if spec[0] in ("L", "U"):
        return (spec[0], tuple(_plain_spec(s) for s in spec[1]))
    if spec[0] == "D":
        return ("D", tuple((k, _plain_spec(s)) for k, s in spec[1]))
    return spec


def save(ep, f):
    """Write ep to f (a path or a binary file object)."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"export.save: expected an ExportedProgram, got {type(ep).__name__}")
    graph = dataclasses.replace(ep.graph, output_spec=_plain_spec(ep.graph.output_spec))
    data = {"format": FORMAT, "version": VERSION, "graph": _to_data(graph, "graph"),
            "state_dict": dict(ep.state_dict), "input_names": list(ep.input_names),
            "dynamic": {k: [list(w) for w in v] for k, v in ep.dynamic.items()},
            "range_constraints": {k: list(v) for k, v in ep.range_constraints.items()}}
    serialization.save_safetensors_checkpoint(data, f)      # code-free, whatever save writes


def load(f):
    """The ExportedProgram saved in f (a path, a binary file object or bytes)."""
    data = serialization.load(f)          # weights back on the devices they were saved from
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise serialization.CheckpointError("export.load: not an exported program (a "
                                            "dispatchtorch.export.save file)")
    if data.get("version") != VERSION:
        raise serialization.CheckpointError(f"export.load: format version {data.get('version')} "
                                            f"is not {VERSION}")
    graph = _from_data(data["graph"])
    graph.values = {int(k): v for k, v in graph.values.items()}
    return ExportedProgram(graph, data["state_dict"], list(data["input_names"]),
                           {k: [tuple(w) for w in v] for k, v in data["dynamic"].items()},
                           {k: tuple(v) for k, v in data["range_constraints"].items()})
