"""Dynamic axes: torch.export's `Dim` and `dynamic_shapes`, and the symbolic graph.

A dynamic axis gets a symbol. The program is traced once per point of
`_symbolic.sample_points` (two sizes per symbol, every corner, and a check point),
with the example inputs resized along their dynamic axes; the graphs must agree in structure,
and every integer that differs between them is fitted to a `SymInt`.
"""
from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from ._symbolic import fit


class Dim:
    """A named dynamic size: `Dim("batch", min=2, max=1024)` (torch.export.Dim).
    `Dim.AUTO` / `Dim.DYNAMIC` let export name it; `Dim.STATIC` (or None) keeps the size."""

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Dim: name must be an identifier, got {name!r}")
        self.__name__ = name
        self.min = 0 if min is None else int(min)
        self.max = None if max is None else int(max)
        if self.max is not None and self.max < self.min:
            raise ValueError(f"Dim {name}: max {self.max} < min {self.min}")

    def __repr__(self):
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Dim.{self.name}"


Dim.AUTO = _Marker("AUTO")
Dim.DYNAMIC = _Marker("DYNAMIC")
Dim.STATIC = _Marker("STATIC")


def input_axes(fn, args, kwargs, dynamic_shapes):
    """{(input position, axis): Dim} from torch.export-style dynamic_shapes: a dict by
    argument name, or a tuple/list in argument order; each entry None, a {axis: Dim}
    dict or a tuple/list with one entry per axis. Positions follow the flattened inputs
    (positional arguments, then keyword arguments in order)."""
    if dynamic_shapes is None:
        return {}
    names = _arg_names(fn, len(args)) + list(kwargs)
    values = list(args) + list(kwargs.values())
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise ValueError(f"export: dynamic_shapes names {unknown}, which are not arguments "
                             f"of the forward ({names})")
        specs = [dynamic_shapes.get(n) for n in names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(values):
            raise ValueError(f"export: dynamic_shapes has {len(dynamic_shapes)} entries for "
                             f"{len(values)} inputs")
        specs = list(dynamic_shapes)
    else:
        raise TypeError("export: dynamic_shapes must be a dict or a tuple, got "
                        f"{type(dynamic_shapes).__name__}")
    out = {}
    for pos, (name, value, spec) in enumerate(zip(names, values, specs)):
        if spec is None:
            continue
        if not hasattr(value, "dim"):
            raise TypeError(f"export: dynamic_shapes marks {name!r}, which is not a tensor "
                            f"({type(value).__name__})")
        ndim = value.dim()
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for axis, d in items:
            if d is None or d is Dim.STATIC:
                continue
            if not -ndim <= axis < ndim:
                raise IndexError(f"export: dynamic_shapes[{name!r}] axis {axis} is out of range "
                                 f"for a {ndim}-d input")
            axis %= ndim
            if isinstance(d, _Marker):
                d = Dim(f"{name}_dim{axis}")
            if not isinstance(d, Dim):
                raise TypeError(f"export: dynamic_shapes[{name!r}][{axis}] must be a Dim, "
                                f"got {d!r}")
            out[(pos, axis)] = d
    return out


def _arg_names(fn, n):
    try:
        params = [p for p in inspect.signature(getattr(fn, "forward", fn)).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    return names + [f"args_{i}" for i in range(len(names), n)]


def symbols_of(axes, values):
    """{symbol: example size} and a check that one symbol's axes share one size."""
    base = {}
    for (pos, axis), d in axes.items():
        size = values[pos].shape[axis]
        name = d.__name__
        if base.setdefault(name, size) != size:
            raise ValueError(f"export: the axes marked {name} have different sizes "
                             f"({base[name]} and {size})")
        if size < 2:
            raise ValueError(f"export: the example size of dynamic dim {name} is {size}; "
                             "give an example of at least 2 (sizes 0 and 1 are specialised)")
    return base


def resized(values, axes, point):
    """The inputs with each dynamic axis resized to point[symbol] (wrapping the example
    values along the axis, so indices stay valid)."""
    from .. import from_numpy
    out = list(values)
    for (pos, axis), d in axes.items():
        x = out[pos]
        n = point[d.__name__]
        if x.shape[axis] == n:
            continue
        host = x.detach().cpu().numpy()
        host = np.take(host, np.arange(n) % host.shape[axis], axis=axis)
        out[pos] = from_numpy(np.ascontiguousarray(host)).to(x.device)
    return out


class GraphMismatch(RuntimeError):
    pass


@dataclasses.dataclass
class SymConst:
    """A constant that follows the dynamic sizes: kind "scalar" (a count such as the
    divisor of a mean over a dynamic axis: value is a SymInt), "arange" (0, 1, ...,
    size[0] - 1) or "full" (size filled with value)."""
    kind: str
    dtype: str
    size: tuple
    value: object

    def evaluate(self, env):
        from ._symbolic import concrete
        size = tuple(concrete(self.size, env))
        if self.kind == "scalar":
            return np.asarray(concrete(self.value, env), dtype=self.dtype)
        if self.kind == "arange":
            return np.arange(size[0], dtype=self.dtype)
        return np.full(size, self.value, dtype=self.dtype)


def _sym_constant(objs, points, path):
    first = objs[0]
    same_dtype = all(o.dtype == first.dtype and o.ndim == first.ndim for o in objs)
    try:
        if same_dtype and first.ndim == 0 and all(float(o) == int(o) for o in objs):
            return SymConst("scalar", first.dtype.str, (), fit([int(o) for o in objs], points,
                                                                 path))
        if same_dtype and first.ndim == 1 and all(
                np.array_equal(o, np.arange(len(o))) for o in objs):
            return SymConst("arange", first.dtype.str, (fit([len(o) for o in objs], points,
                                                            path),), 0)
        if same_dtype and all(o.size and np.all(o == first.flat[0]) for o in objs):
            size = tuple(fit([o.shape[d] for o in objs], points, f"{path}.shape[{d}]")
                         for d in range(first.ndim))
            return SymConst("full", first.dtype.str, size, first.flat[0].item())
    except ValueError:
        pass
    raise GraphMismatch(f"{path}: a constant depends on a dynamic size "
                        f"(shapes {[o.shape for o in objs[:2]]})")


def unify(objs, points, path="graph"):
    """One object from the traces' objects: integers that differ become SymInts."""
    first = objs[0]
    if isinstance(first, bool) or first is None or isinstance(first, (str, float, complex)):
        if any(o != first for o in objs[1:]):
            raise GraphMismatch(f"{path} differs between sizes: {objs[0]!r} vs {objs[1]!r}")
        return first
    if isinstance(first, (int, np.integer)) and not isinstance(first, np.bool_):
        if not all(isinstance(o, (int, np.integer)) for o in objs):
            raise GraphMismatch(f"{path} differs between sizes")
        try:
            return fit([int(o) for o in objs], points, path)
        except ValueError as exc:
            raise GraphMismatch(str(exc)) from None
    if isinstance(first, np.ndarray):
        if all(o.shape == first.shape and np.array_equal(o, first, equal_nan=True)
               for o in objs[1:]):
            return first
        return _sym_constant(objs, points, path)
    if dataclasses.is_dataclass(first) and not isinstance(first, type):
        changes = {}
        for f in dataclasses.fields(first):
            if not f.compare:
                continue
            changes[f.name] = unify([getattr(o, f.name) for o in objs], points,
                                    f"{path}.{f.name}")
        return dataclasses.replace(first, **changes)
    if isinstance(first, (tuple, list)):
        if any(len(o) != len(first) or type(o) is not type(first) for o in objs[1:]):
            raise GraphMismatch(f"{path} differs between sizes (lengths "
                                f"{[len(o) for o in objs[:2]]})")
        items = [unify([o[i] for o in objs], points, f"{path}[{i}]") for i in range(len(first))]
        return type(first)(items) if not hasattr(first, "_fields") else type(first)(*items)
    if isinstance(first, dict):
        if any(list(o) != list(first) for o in objs[1:]):
            raise GraphMismatch(f"{path} differs between sizes (keys)")
        return {k: unify([o[k] for o in objs], points, f"{path}[{k!r}]") for k in first}
    if any(o != first for o in objs[1:]):
        raise GraphMismatch(f"{path} differs between sizes: {objs[0]!r} vs {objs[1]!r}")
    return first


def specialize(obj, env):
    """obj with every SymInt evaluated at env ({symbol: size}), through dataclasses,
    tuples, lists and dicts (the graph for one call's sizes)."""
    from ._symbolic import SymInt
    if isinstance(obj, (SymInt, SymConst)):
        return obj.evaluate(env)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: specialize(getattr(obj, f.name), env)
                                           for f in dataclasses.fields(obj) if f.init})
    if isinstance(obj, tuple):
        items = [specialize(v, env) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        return [specialize(v, env) for v in obj]
    if isinstance(obj, dict):
        return {k: specialize(v, env) for k, v in obj.items()}
    return obj
