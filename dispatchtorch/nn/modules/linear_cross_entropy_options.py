"""nn.LinearCrossEntropyOptions (at PyTorch's module path): the settings of
linear_cross_entropy's chunked path (nn/functional/_linear_cross_entropy_chunked.py)."""
from __future__ import annotations

import dataclasses

from ... import _dtype as D

_POLICIES = ("auto", "accurate", "balanced", "compact")
_LOWP = (D.float16, D.bfloat16)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration of linear_cross_entropy's chunked path (torch.nn's fields and
    checks). `batch_chunk_size` rows per chunk, or `chunking_method` 'aspect_ratio[:N]'
    sizes a chunk's logits like the input; 'auto' resolves to 'aspect_ratio:2'."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        _check_method(self.chunking_method)
        if not (self.batch_chunk_size is None or isinstance(self.batch_chunk_size, int) and
                not isinstance(self.batch_chunk_size, bool) and self.batch_chunk_size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (*_LOWP, D.float32, D.float64):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             f"acc_dtype=None to let the op pick automatically.")


def _check_method(method):
    if method is None or method == "auto":
        return
    name, sep, factor = method.partition(":")
    if not (name == "aspect_ratio" and (not sep or factor.isdigit() and int(factor) > 0)):
        raise ValueError(f"invalid chunking_method: {method!r}")
