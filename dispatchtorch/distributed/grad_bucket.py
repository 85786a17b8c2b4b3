"""GradBucket: what a DDP communication hook receives, as torch.distributed.GradBucket
(one bucket of DistributedDataParallel's reducer: a flat buffer of local gradients)."""
from __future__ import annotations

import enum


class BuiltinCommHookType(enum.Enum):
    """torch.distributed.BuiltinCommHookType (served by the Python default hooks)."""

    ALLREDUCE = 1
    FP16_COMPRESS = 2


class GradBucket:
    """One bucket: `buffer()` is the flat 1-D tensor of its gradients (summed over this
    rank's backward passes, not yet averaged); `gradients()` are views of it, one per
    parameter, in `parameters()`' order."""

    def __init__(self, index, buffer, gradients, parameters, is_last):
        self._index, self._buffer = index, buffer
        self._gradients, self._parameters, self._is_last = gradients, parameters, is_last

    def index(self):
        """The bucket's index (0 holds the last parameters registered, as PyTorch's)."""
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        """Replace the buffer (the compression wrappers put a cast copy here)."""
        self._buffer = buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        """Whether this is the last bucket of the iteration (its first layers')."""
        return self._is_last

    def __repr__(self):
        return f"<GradBucket {self._index} of {self._buffer.numel()} elements>"
