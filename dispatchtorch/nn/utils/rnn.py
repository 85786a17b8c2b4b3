"""Packed and padded variable-length sequences (PyTorch's torch.nn.utils.rnn).

A PackedSequence holds the time-major concatenation of the sequences sorted by
decreasing length: `data[sum(batch_sizes[:t]) : ... + batch_sizes[t]]` are the
sequences still running at step t.
"""
from __future__ import annotations

from collections import namedtuple

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of "
                                 "PackedSequence should never be created manually. They should "
                                 "be instantiated by functions like pack_sequence and "
                                 "pack_padded_sequences in nn.utils.rnn.")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data          # the (data, batch_sizes) tuple form
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _map(self, fn):
        data = fn(self.data)
        if data is self.data:
            return self
        same = lambda t: None if t is None else t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, same(self.sorted_indices),
                          same(self.unsorted_indices))

    def to(self, *args, **kwargs):
        return self._map(lambda t: t.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._map(lambda t: t.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._map(lambda t: t.cpu())

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    out = _ops.empty_like(permutation)
    return out.scatter_(0, permutation, _ops.arange(permutation.numel(),
                                                    device=permutation.device))


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lens = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lens)))
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _ops.tensor(order, dtype=D.int64, device=input.device)
    if batch_first:
        input = input.transpose(0, 1)
    if input.shape[1] != len(lens):
        raise RuntimeError(f"pack_padded_sequence: expected {input.shape[1]} lengths, got "
                           f"{len(lens)}")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if max(lens) > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length {max(lens)} exceeds the padded "
                           f"sequence length {input.shape[0]}")
    slens = [lens[i] for i in order]
    if sorted_indices is not None:
        input = input.index_select(1, sorted_indices)
    sizes = [sum(1 for n in slens if n > t) for t in range(slens[0])]
    data = _ops.cat([input[t, :b] for t, b in enumerate(sizes)], 0)
    return PackedSequence(data, _ops.tensor(sizes, dtype=D.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    data, sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
    else:
        total_length = steps
    rows, pos = [], 0
    for b in sizes:
        step = data[pos:pos + b]
        pos += b
        if b < batch:
            fill = _ops.full((batch - b,) + tuple(data.shape[1:]), padding_value,
                             dtype=data.dtype, device=data.device)
            step = _ops.cat([step, fill], 0)
        rows.append(step)
    for _ in range(total_length - steps):
        rows.append(_ops.full((batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                              device=data.device))
    out = _ops.stack(rows, 0)
    lengths = [sum(1 for b in sizes if b > i) for i in range(batch)]
    lengths_t = _ops.tensor(lengths, dtype=D.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices.cpu())
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        extra = longest - s.shape[0]
        if extra:
            fill = _ops.full((extra,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype,
                             device=s.device)
            s = _ops.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
