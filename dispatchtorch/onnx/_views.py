"""Strided views and partial writes as ONNX ops.

A captured view is (shape, strides, offset) over the contiguous storage of its root
value. ONNX has no strided views, so a view becomes: Reshape of the root into the
axes its strides imply, Slice of the offset window, Transpose into the view's dim
order, Reshape/Expand for size-1 and stride-0 (broadcast) dims. Sizes that follow a
dynamic axis stay symbolic. A view whose strides do not nest (a diagonal, overlapping
windows) is a Gather of constant positions, which needs static sizes.
"""
from __future__ import annotations

import numpy as np

from ..export._symbolic import SymInt, sym_div


def contiguous(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc = acc * n
    return tuple(reversed(strides))


def numel(shape):
    n = 1
    for d in shape:
        n = n * d
    return n


def same(a, b):
    """Equal as sizes (a SymInt equals only the same polynomial)."""
    if isinstance(a, SymInt) or isinstance(b, SymInt):
        return isinstance(a, SymInt) and isinstance(b, SymInt) and a == b
    return int(a) == int(b)


def same_shape(a, b):
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def is_static(dims):
    return not any(isinstance(d, SymInt) for d in dims)


class ViewError(NotImplementedError):
    pass


def read_view(b, root, root_shape, shape, strides, offset):
    """The ONNX value of the view (shape, strides, offset) of `root` (root_shape, contiguous)."""
    shape, strides = tuple(shape), tuple(strides)
    if same_shape(shape, root_shape) and same_shape(strides, contiguous(root_shape)) \
            and same(offset, 0):
        return root
    if same_shape(strides, contiguous(shape)) and same(offset, 0) \
            and same(numel(shape), numel(root_shape)):
        return b.reshape(root, shape)
    try:
        return _nested_view(b, root, root_shape, shape, strides, offset)
    except (ValueError, ViewError):
        return _gather_view(b, root, root_shape, shape, strides, offset)


def _nested_view(b, root, root_shape, shape, strides, offset):
    real = [i for i, (n, s) in enumerate(zip(shape, strides)) if int(n) > 1 and int(s) > 0]
    real.sort(key=lambda i: -int(strides[i]))
    m = numel(root_shape)
    # the axes the strides imply, outermost first, then the element axis
    if real:
        axes = [sym_div(m, strides[real[0]])]
        axes += [sym_div(strides[a], strides[c]) for a, c in zip(real, real[1:])]
        axes.append(strides[real[-1]])
    else:
        axes = [m]
    if int(numel(axes)) != int(m):
        raise ViewError("strides do not tile the storage")
    # the offset in those axes (mixed radix, on the traced sizes)
    starts, rest = [], int(offset)
    for size in reversed(axes):
        starts.append(rest % int(size))
        rest //= int(size)
    starts.reverse()
    if rest:
        raise ViewError("offset outside the storage")
    if sum(s * int(st) for s, st in zip(starts, contiguous(axes))) != int(offset) \
            or not same(sum(s * st for s, st in zip(starts, contiguous(axes))), offset):
        raise ViewError("offset depends on a dynamic dim")
    counts = [shape[i] for i in real] + [1]
    for st, n, size in zip(starts, counts, axes):
        if st + int(n) > int(size):
            raise ViewError("the view wraps around an axis")
    x = root if same_shape(axes, root_shape) else b.reshape(root, axes)
    cut = [j for j, (st, n, size) in enumerate(zip(starts, counts, axes))
           if st or not same(n, size)]
    if cut:
        x = b.op("Slice", [x, b.shape_tensor([starts[j] for j in cut]),
                           b.shape_tensor([starts[j] + counts[j] for j in cut]),
                           b.int64s(cut)])
    order = sorted(range(len(real)), key=lambda k: real[k])
    if order != list(range(len(real))):
        x = b.op("Transpose", [x], perm=order + [len(real)])
    unit = tuple(shape[i] if i in real else 1 for i in range(len(shape)))
    x = b.reshape(x, unit)
    if not same_shape(unit, shape):
        x = b.op("Expand", [x, b.shape_tensor(shape)])
    return x


def positions(root_shape, shape, strides, offset):
    """The flat storage positions a static view reads (numpy int64, the view's shape)."""
    if not (is_static(root_shape) and is_static(shape) and is_static(strides)
            and not isinstance(offset, SymInt)):
        raise ViewError(f"a view with sizes {tuple(shape)}, strides {tuple(strides)} that "
                        "follow a dynamic axis has no ONNX form")
    flat = np.arange(int(numel(root_shape)), dtype=np.int64)
    return np.lib.stride_tricks.as_strided(
        flat[int(offset):], tuple(int(n) for n in shape),
        tuple(int(s) * 8 for s in strides)).copy()


def _gather_view(b, root, root_shape, shape, strides, offset):
    pos = positions(root_shape, shape, strides, offset)
    flat = b.op("Reshape", [root, b.int64s([-1])])
    return b.op("Gather", [flat, b.const(pos)], axis=0)


def write_view(b, root, root_shape, shape, strides, offset, value):
    """root with the view (shape, strides, offset) replaced by value: a ScatterND of
    constant positions over the flat storage (static sizes only)."""
    pos = positions(root_shape, shape, strides, offset).reshape(-1, 1)
    flat = b.op("Reshape", [root, b.int64s([-1])])
    vals = b.op("Reshape", [value, b.int64s([-1])])
    out = b.op("ScatterND", [flat, b.const(pos), vals])
    return b.reshape(out, root_shape)
