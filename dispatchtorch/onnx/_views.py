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


class Box:
    """A view as a strided box of the root reshaped to `axes`: along axis j it takes
    counts[j] elements from starts[j] every steps[j]; view dim real[k] (the view's
    dims of size > 1 and stride > 0, in stride order) runs along axis mapped[k]."""

    def __init__(self, axes, starts, counts, steps, real, mapped):
        self.axes, self.starts, self.counts, self.steps = axes, starts, counts, steps
        self.real, self.mapped = real, mapped


def _real_dims(shape, strides):
    real = [i for i, (n, s) in enumerate(zip(shape, strides)) if int(n) > 1 and int(s) > 0]
    real.sort(key=lambda i: -int(strides[i]))
    return real


def _box(axes, shape, strides, offset, real, mapped):
    """The Box for a given axes / mapping, or ViewError where the view is not one."""
    cs = contiguous(axes)
    starts, rest = [], int(offset)
    for size in reversed(axes):
        starts.append(rest % int(size))
        rest //= int(size)
    starts.reverse()
    if rest:
        raise ViewError("offset outside the storage")
    if not same(sum(s * st for s, st in zip(starts, cs)), offset):
        raise ViewError("offset depends on a dynamic dim")
    counts, steps = [1] * len(axes), [1] * len(axes)
    for i, j in zip(real, mapped):
        step = sym_div(strides[i], cs[j])
        if isinstance(step, SymInt) or step < 1:
            raise ViewError("a step that follows a dynamic axis")
        counts[j], steps[j] = shape[i], step
        if starts[j] + (int(shape[i]) - 1) * step >= int(axes[j]):
            raise ViewError("the view wraps around an axis")
    return Box(axes, starts, counts, steps, real, mapped)


def decompose(root_shape, shape, strides, offset):
    """The view as a Box: first over the axes its strides imply (reshapes, permutes,
    slices), then over the root's own axes with steps (x[:, ::2]); ViewError when it is
    neither (a diagonal, overlapping windows)."""
    real = _real_dims(shape, strides)
    m = numel(root_shape)
    try:
        if real:
            axes = [sym_div(m, strides[real[0]])]
            axes += [sym_div(strides[a], strides[c]) for a, c in zip(real, real[1:])]
            axes.append(strides[real[-1]])
        else:
            axes = [m]
        return _box(axes, shape, strides, offset, real, list(range(len(real))))
    except (ValueError, ViewError):
        pass
    cs = contiguous(root_shape)
    mapped, j = [], 0
    for i in real:
        while j < len(root_shape) and (int(root_shape[j]) < 2 or int(strides[i]) % int(cs[j])):
            j += 1
        if j == len(root_shape):
            raise ViewError("strides that are not steps of the root's axes")
        mapped.append(j)
        j += 1
    return _box(tuple(root_shape), shape, strides, offset, real, mapped)


def _nested_view(b, root, root_shape, shape, strides, offset):
    box = decompose(root_shape, shape, strides, offset)
    axes = box.axes
    x = root if same_shape(axes, root_shape) else b.reshape(root, axes)
    cut = [j for j in range(len(axes))
           if box.starts[j] or box.steps[j] != 1 or not same(box.counts[j], axes[j])]
    if cut:
        ends = [box.starts[j] + (box.counts[j] - 1) * box.steps[j] + 1 for j in cut]
        x = b.op("Slice", [x, b.shape_tensor([box.starts[j] for j in cut]),
                           b.shape_tensor(ends), b.int64s(cut),
                           b.int64s([box.steps[j] for j in cut])])
    order = sorted(range(len(box.real)), key=lambda k: box.real[k])   # view dim order
    rest = [j for j in range(len(axes)) if j not in box.mapped]
    perm = [box.mapped[k] for k in order] + rest
    if perm != list(range(len(axes))):
        x = b.op("Transpose", [x], perm=perm)
    unit = tuple(shape[i] if i in box.real else 1 for i in range(len(shape)))
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
    """A Gather of constant positions; a dynamic outermost axis the view runs along
    whole stays a real axis (the positions cover one slice of it)."""
    cs = contiguous(root_shape)
    if root_shape and isinstance(root_shape[0], SymInt) and is_static(root_shape[1:]):
        outer = [i for i, (n, st) in enumerate(zip(shape, strides))
                 if same(n, root_shape[0]) and same(st, cs[0])]
        if outer and not isinstance(offset, SymInt) and int(offset) < int(cs[0]):
            i = outer[0]
            inner = positions(root_shape[1:], shape[:i] + shape[i + 1:],
                              strides[:i] + strides[i + 1:], offset)
            x = b.op("Reshape", [root, b.int64s([-1, int(cs[0])])])
            x = b.op("Gather", [x, b.const(inner)], axis=1)
            if i:
                perm = list(range(1, i + 1)) + [0] + list(range(i + 1, len(shape)))
                x = b.op("Transpose", [x], perm=perm)
            return x
    pos = positions(root_shape, shape, strides, offset)
    flat = b.op("Reshape", [root, b.int64s([-1])])
    return b.op("Gather", [flat, b.const(pos)], axis=0)


def write_view(b, root, root_shape, shape, strides, offset, value):
    """root with the view (shape, strides, offset) replaced by value. A box view with
    unit steps: value padded into place and selected by a padded mask (sizes may follow
    dynamic axes); any other view: a ScatterND of constant positions (static sizes)."""
    try:
        box = decompose(root_shape, shape, strides, offset)
        if any(st != 1 for st in box.steps) or \
                any(int(n) > 1 and int(s) == 0 for n, s in zip(shape, strides)):
            raise ViewError("a stepped or broadcast view")
    except (ValueError, ViewError):
        return _scatter_write(b, root, root_shape, shape, strides, offset, value)
    axes = box.axes
    order = sorted(range(len(box.real)), key=lambda k: box.real[k])
    rest = [j for j in range(len(axes)) if j not in box.mapped]
    perm = [box.mapped[k] for k in order] + rest          # box axes -> value order
    inverse = [perm.index(j) for j in range(len(axes))]
    x = b.reshape(value, [shape[i] for i in sorted(box.real)] + [1] * len(rest))
    if inverse != list(range(len(axes))):
        x = b.op("Transpose", [x], perm=inverse)
    x = b.reshape(x, box.counts)
    pads = b.op("Concat", [b.shape_tensor(box.starts), b.shape_tensor(
        [a - s - c for a, s, c in zip(axes, box.starts, box.counts)])], axis=0)
    true = b.onnx.helper.make_tensor("value", 9, [1], [True])
    mask = b.op("Pad", [b.op("ConstantOfShape", [b.op("Shape", [x])], value=true), pads])
    placed = b.op("Pad", [x, pads])
    base = root if same_shape(axes, root_shape) else b.reshape(root, axes)
    out = b.op("Where", [mask, placed, base])
    return out if same_shape(axes, root_shape) else b.reshape(out, root_shape)


def _scatter_write(b, root, root_shape, shape, strides, offset, value):
    pos = positions(root_shape, shape, strides, offset).reshape(-1, 1)
    flat = b.op("Reshape", [root, b.int64s([-1])])
    vals = b.op("Reshape", [value, b.int64s([-1])])
    out = b.op("ScatterND", [flat, b.const(pos), vals])
    return b.reshape(out, root_shape)
