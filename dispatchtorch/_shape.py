"""Shape arithmetic done in the frontend so that kernels never infer shapes."""
from __future__ import annotations

import operator


_STRIDES: dict = {}


def contiguous_strides(shape):
    """C-order element strides of shape (cached: views and layouts ask for the same few
    shapes on every call)."""
    try:
        st = _STRIDES.get(shape)
    except TypeError:                       # a list: not a key
        return _contiguous_strides(shape)
    if st is None:
        st = _contiguous_strides(shape)
        if len(_STRIDES) < 8192:
            _STRIDES[shape] = st
    return st


def _contiguous_strides(shape):
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n else 1
    return tuple(reversed(strides))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def broadcast_shapes2(a, b, op=None):
    """torch.broadcast_shapes for two shapes, with PyTorch's error message (prefixed
    with the op's name when given)."""
    if a == b:
        return a
    na, nb = len(a), len(b)
    n = max(na, nb)
    a1 = (1,) * (n - na) + a
    b1 = (1,) * (n - nb) + b
    out = []
    for i, (x, y) in enumerate(zip(a1, b1)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            where = f"{op}: " if op else ""
            raise RuntimeError(f"{where}The size of tensor a ({x}) must match the size of tensor "
                               f"b ({y}) at non-singleton dimension {i}")
    return tuple(out)


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:           # a plain int is a 1-d shape, as in PyTorch
        out = broadcast_shapes2(out, (s,) if isinstance(s, int) else tuple(s))
    return out


def expand_strides(shape, strides, target):
    """Strides that view (shape, strides) as the broadcast shape `target`."""
    lead = len(target) - len(shape)
    out = [0] * lead
    for i, (n, st) in enumerate(zip(shape, strides)):
        t = target[lead + i]
        if n == t:
            out.append(st)
        elif n == 1:
            out.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing size "
                               f"({n}) at non-singleton dimension {lead + i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(shape)}")
    return tuple(out)


def norm_dim(dim, ndim, op="op"):
    """A dim in [-ndim, ndim) made non-negative; 0-d tensors accept -1 and 0."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}") from None
    n = ndim if ndim else 1
    if not -n <= d < n:
        where = "" if op == "op" else f"{op}(): "
        raise IndexError(f"{where}Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return d + n if d < 0 else d


def check_dim_arg(dim, op):
    """dim must be None, an int or a sequence of ints: PyTorch's parser refuses the
    rest (TypeError) before any other check."""
    if dim is None or (isinstance(dim, int) and not isinstance(dim, bool)):
        return
    if isinstance(dim, (tuple, list)) and all(isinstance(d, int) and not isinstance(d, bool)
                                              for d in dim):
        return
    if hasattr(dim, "__index__") and not isinstance(dim, bool):
        return
    raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not "
                    f"{type(dim).__name__}")


def check_keepdim(keepdim, op):
    """keepdim must be a bool, as PyTorch's argument parser requires."""
    if keepdim is not False and keepdim is not True and type(keepdim).__name__ != "bool_":
        raise TypeError(f"{op}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")


def norm_dims(dim, ndim, op="op"):
    """dim=None/int/tuple -> sorted tuple of non-negative dims (None or () = all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        dims = [norm_dim(d, ndim, op) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: dim {dims[0]} appears multiple times in the list of dims")
        if ndim == 0:
            return ()
        return tuple(sorted(dims))
    d = norm_dim(dim, ndim, op)
    return () if ndim == 0 else (d,)


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def as_shape(args, op="view"):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and torch.Size."""
    if len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
    try:     # (an int subclass is kept: compile(dynamic=True)'s symbolic sizes)
        return tuple(a if type(a) is not int and isinstance(a, int) and type(a) is not bool
                     else operator.index(a) for a in args)
    except TypeError:
        raise TypeError(f"{op}: size must be a tuple of ints, got {args!r}") from None


def slice_indices(sl, n):
    """sl.indices(n) for a positive step, in Python arithmetic when n or a bound is an
    int subclass (compile(dynamic=True)'s symbolic sizes keep their expressions
    through it; the C method makes them plain ints)."""
    start, stop = sl.start, sl.stop
    if type(n) is int and (start is None or type(start) is int) and \
            (stop is None or type(stop) is int):
        return sl.indices(n)                  # the usual case: plain ints
    if not (_sub(n) or _sub(start) or _sub(stop)):
        return sl.indices(n)
    step = 1 if sl.step is None else sl.step
    start = 0 if start is None else _clamp(start + n if start < 0 else start, n)
    stop = n if stop is None else _clamp(stop + n if stop < 0 else stop, n)
    return start, stop, step


def _sub(x):
    return type(x) is not int and isinstance(x, int) and type(x) is not bool


def _clamp(i, n):
    return 0 if i < 0 else n if i > n else i


class Size(tuple):
    """torch.Size: a tuple of ints with PyTorch's repr and numel()."""

    __slots__ = ()

    def __repr__(self):
        return f"dispatchtorch.Size([{', '.join(map(str, self))}])"

    def numel(self):
        return numel(self)

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r
