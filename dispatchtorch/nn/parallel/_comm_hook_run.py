"""Running a DDP communication hook on one reducer bucket, and taking its result."""
from __future__ import annotations

from ... import distributed as dist
from ..._tensor import Tensor
from ...futures import Future


def run_hook(hook, state, index, flat, slots, params, n_buckets):
    """hook(state, GradBucket) for bucket `index` (its flat buffer, the per-parameter views
    of it, its parameters); the Future it returns."""
    gb = dist.GradBucket(index, flat, slots, params, index == n_buckets - 1)
    fut = hook(state, gb)
    if not isinstance(fut, Future):
        raise RuntimeError(f"The DDP communication hook must return a torch.futures.Future, "
                           f"got {type(fut).__name__}")
    return fut


def hook_result(bucket):
    """Wait for the bucket's hook Future and copy its tensor into the bucket."""
    value = bucket.fut.wait()
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, Tensor):
        raise RuntimeError(f"The DDP communication hook's Future must hold the reduced bucket "
                           f"tensor (or a list of one), got {type(value).__name__}")
    if value.numel() != bucket.flat.numel():
        raise RuntimeError(f"The DDP communication hook's result has {value.numel()} elements; "
                           f"bucket {bucket.index} holds {bucket.flat.numel()}")
    if value is not bucket.flat:
        bucket.flat.copy_(value.reshape(-1))
