"""The strides PyTorch gives a new result, as plain rules over (shape, strides).

Two rules, both ATen's: an elementwise op's output follows its operands' dimension order
(TensorIterator's fast setup, then `compute_strides` + `reorder_dimensions`), and
`empty_like`'s `preserve_format` keeps a non-overlapping-and-dense input's exact strides
(else the dense strides of its dimension order, `infer_dense_strides`). Each answers
None for "C-contiguous", so the caller's usual path runs unchanged. Only tensors that
carry strides (views) ever reach here: a fresh tensor is C-contiguous, and C-contiguous
operands always give a C-contiguous result.
"""
from __future__ import annotations

from ._layout import channels_last, channels_last_3d, contiguous_format, preserve_format
from ._layout import memory_format as _MemoryFormat
from ._shape import contiguous_strides


def is_contiguous(shape, stride):
    """c10's compute_contiguous (an empty tensor is contiguous)."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_channels_last(shape, stride):
    """c10's compute_channels_last_contiguous_2d: strides grow along C, W, H, N."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        n = shape[d]
        if n != 1:
            if stride[d] != expected:
                return False
            expected *= n
    return True


def channels_last_strides(shape):
    """c10's get_channels_last_strides_2d."""
    n, c, h, w = shape
    del n
    s3 = c
    s2 = s3 * w
    return (s2 * h, 1, s2, s3)


def is_non_overlapping_and_dense(shape, stride):
    """c10's is_non_overlapping_and_dense: the elements fill one block, each once (an
    empty tensor is, being contiguous)."""
    if 0 in shape:
        return True
    if len(shape) == 1:
        return shape[0] < 2 or stride[0] == 1
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: stride[d])
    expected = 1
    for d in dims:
        if stride[d] != expected:
            return False
        expected *= shape[d]
    return True


def _sorted_dims(shape, strides_of_operands):
    """TensorIterator's reorder_dimensions: dims fastest first, ordered by the operands'
    strides (the first operand with a strict order decides; stride 0 is broadcast and
    compares equal to anything; equal strides put the smaller dim first), by the insertion
    sort that keeps ambiguous pairs where they were."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for st in strides_of_operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def _strides_in_order(shape, fastest_first):
    """Dense strides laying the dims out in that order (TensorIterator's compatible_stride,
    which multiplies by every size, 0 and 1 included)."""
    out = [0] * len(shape)
    step = 1
    for d in fastest_first:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def iterator_strides(shape, operands):
    """An elementwise result's strides, or None for C-contiguous. shape: the broadcast
    shape; operands: (shape, strides) of every input in order, Python scalars as ((), ())."""
    ndim = len(shape)
    if ndim < 2:
        return None
    if all(s == shape for s, _ in operands):       # TensorIterator's fast setup
        if all(is_contiguous(s, st) for s, st in operands):
            return None
        if ndim == 4 and all(is_channels_last(s, st) for s, st in operands):
            return channels_last_strides(shape)
        first = tuple(operands[-1][1])
        if all(tuple(st) == first for _, st in operands) and \
                is_non_overlapping_and_dense(shape, first):
            return None if first == contiguous_strides(shape) else first
    expanded = []
    for s, st in operands:
        lead = ndim - len(s)
        e = [0] * ndim
        for i, (n, x) in enumerate(zip(s, st)):
            e[lead + i] = 0 if n == 1 and shape[lead + i] != 1 else x
        expanded.append(e)
    perm = _sorted_dims(shape, expanded)
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    out = _strides_in_order(shape, perm)
    return None if out == contiguous_strides(shape) else out


def preserve_strides(shape, stride):
    """empty_like's preserve_format: a non-overlapping-and-dense input's own strides, else
    the dense strides of its dimension order (infer_dense_strides)."""
    if is_non_overlapping_and_dense(shape, stride):
        stride = tuple(stride)
        return None if stride == contiguous_strides(shape) else stride
    perm = list(range(len(shape) - 1, -1, -1))
    if len(shape) > 1:
        perm = _sorted_dims(shape, [stride])
    out = [0] * len(shape)
    step = 1
    for d in perm:              # infer_dense_strides: sizes 0 and 1 count as 1
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    out = tuple(out)
    return None if out == contiguous_strides(shape) else out


def outer_first(shape, stride):
    """The dims of a dense (shape, stride) from the slowest to the fastest: permuting a
    tensor so makes it C-contiguous over the dims of size > 1."""
    return sorted(range(len(shape)), key=lambda d: (-stride[d], -shape[d]))


def channels_last_3d_strides(shape):
    """c10's get_channels_last_strides_3d."""
    c, d, h, w = shape[1:]
    s4 = c
    s3 = s4 * w
    s2 = s3 * h
    return (s2 * d, 1, s2, s3, s4)


def format_strides(op, shape, stride, memory_format):
    """The strides a `*_like` factory or copy gets for memory_format (None is
    preserve_format, the default); stride: the input's, None when C-contiguous. None for
    C-contiguous; PyTorch's errors for a bad argument or rank."""
    if memory_format is None or memory_format is preserve_format:
        return None if stride is None else preserve_strides(shape, stride)
    if not isinstance(memory_format, _MemoryFormat):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(memory_format).__name__}")
    if memory_format is contiguous_format:
        return None
    rank = 4 if memory_format is channels_last else 5
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    st = channels_last_strides(shape) if rank == 4 else channels_last_3d_strides(shape)
    return None if st == contiguous_strides(shape) else st


def _strides_like(shape, stride, order):
    """c10's is_channels_last_strides_2d/3d: strides non-decreasing along `order` (C first),
    NCHW winning the ambiguous cases (a zero channel stride, N111)."""
    if stride[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or stride[d] < low:
            return False
        if d == 0 and low == stride[1]:
            return False
        low = stride[d] * shape[d] if shape[d] > 1 else stride[d]
    return True


def suggested_format(shape, stride):
    """Tensor.suggest_memory_format(): the format ATen's conv, pooling, norm and
    interpolation kernels allocate their output in. stride None: C-contiguous."""
    if stride is not None:
        if len(shape) == 4 and _strides_like(shape, stride, (1, 3, 2, 0)):
            return channels_last
        if len(shape) == 5 and _strides_like(shape, stride, (1, 4, 3, 2, 0)):
            return channels_last_3d
    return contiguous_format
