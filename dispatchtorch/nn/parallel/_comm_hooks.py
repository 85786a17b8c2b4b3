"""DistributedDataParallel.register_comm_hook and _register_builtin_comm_hook: PyTorch's
checks, then the hook replaces the reducer's all-reduce of each bucket."""
from __future__ import annotations

import inspect

from ... import distributed as dist
from ...distributed.algorithms.ddp_comm_hooks import default_hooks
from ...futures import Future


def _check_comm_hook(hook):
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    sig = inspect.signature(hook)
    bucket = sig.parameters.get("bucket")
    if bucket is not None and bucket.annotation not in (inspect.Parameter.empty,
                                                         dist.GradBucket):
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    if sig.return_annotation not in (inspect.Signature.empty, Future):
        raise ValueError("Communication hook: return annotation should be "
                         "torch.futures.Future[torch.Tensor].")


class CommHookMixin:
    """The comm-hook methods of DistributedDataParallel."""

    def _set_hook(self, state, hook):
        r = self.reducer
        if r.hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        r.hook, r.hook_state = hook, state

    def register_comm_hook(self, state, hook):
        """hook(state, bucket: GradBucket) -> Future of the reduced bucket tensor replaces
        the all-reduce of every bucket (it must do its own averaging)."""
        _check_comm_hook(hook)
        self._set_hook(state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type):
        """ALLREDUCE / FP16_COMPRESS, run by the Python default hooks."""
        if not isinstance(comm_hook_type, dist.BuiltinCommHookType):
            raise TypeError(f"_register_builtin_comm_hook(): expected a "
                            f"torch.distributed.BuiltinCommHookType, got "
                            f"{type(comm_hook_type).__name__}")
        hook = (default_hooks.allreduce_hook if comm_hook_type is dist.BuiltinCommHookType.ALLREDUCE
                else default_hooks.fp16_compress_hook)
        self._set_hook(self.process_group, hook)
