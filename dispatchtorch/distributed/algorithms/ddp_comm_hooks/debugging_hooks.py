"""noop_hook: no communication at all (each rank keeps its local gradients), as PyTorch's,
for measuring what communication costs."""
from __future__ import annotations

from ....futures import Future

__all__ = ["noop_hook"]


def noop_hook(_, bucket):
    """A Future already holding the bucket's own buffer."""
    fut = Future()
    fut.set_result(bucket.buffer())
    return fut
