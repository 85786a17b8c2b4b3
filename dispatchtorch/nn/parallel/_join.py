"""DistributedDataParallel under Join (uneven inputs): the active ranks' per-forward
collectives, and the join hook with which a rank that ran out of data shadows them
(buffers' broadcast, the backward's bucket reductions of zeros, the used map) and, once
every rank joined, broadcasts the final model from a last joiner, as PyTorch's."""
from __future__ import annotations

from ... import distributed as dist
from ... import ops as _ops
from ...distributed.algorithms.join import Join, Joinable, JoinHook, _JoinConfig


class _DDPJoinHook(JoinHook):
    def __init__(self, ddp, divide_by_initial_world_size):
        if not isinstance(ddp, JoinMixin):
            raise AssertionError(f"DDP join hook requires passing in a DistributedDataParallel "
                                 f"instance as the state, got {type(ddp).__name__}")
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        """One iteration of the active ranks, with this rank's gradients all zero."""
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()       # as the active ranks' forward does, once
        ddp._sync_buffers(joined=True)
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if should_sync:
            ddp.reducer.shadow_backward()

    def post_hook(self, is_last_joiner):
        """Every rank takes the model of a last joiner (the highest rank among them)."""
        ddp = self.ddp
        src = ddp._find_common_rank(dist.get_rank(), is_last_joiner)
        tensors = list(ddp.module.parameters())
        if ddp.broadcast_buffers:
            tensors += list(ddp.module.buffers())
        ddp._broadcast(tensors, src)


class JoinMixin(Joinable):
    """DistributedDataParallel's Joinable side: join(), join_hook, and the per-forward
    collectives that an enabled join context adds."""

    def __init__(self):
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """`with ddp.join():` around the training loop lets ranks run out of data early."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _pre_forward_join(self):
        """Tell the joined ranks this one is still active; how many are (the divisor)."""
        work = Join.notify_join_context(self)
        self.reducer.divisor = self.reducer.world
        if work is not None:
            work.wait()
            if not self._divide_by_initial_world_size:
                self.reducer.divisor = int(work._outputs[0].item())

    def _find_common_rank(self, rank, candidate):
        """The highest rank among those where `candidate` holds, agreed by all."""
        t = _ops.tensor([rank if candidate else -1], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        if t.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. "
                             "This indicates a bug in PyTorch, please report an issue.")
        return int(t.item())

    def _sync_buffers(self, joined=False):
        """Broadcast the buffers (from rank 0, or under join from the highest active rank)."""
        bufs = list(self.module.buffers())
        if not (self.broadcast_buffers and self.require_forward_param_sync and bufs
                and self.world_size > 1):
            return
        src = self._src
        if self._join_config.enable:
            src = self._find_common_rank(dist.get_rank(), not joined)
        self._broadcast(bufs, src)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        """Active ranks send 1 when this iteration's backward synchronises; joined ranks 0."""
        on = not is_joined_rank and self.require_backward_grad_sync
        t = (_ops.ones if on else _ops.zeros)(1, device=self.device)
        dist.all_reduce(t, group=self.process_group)
        return t.item() != 0 if is_joined_rank else None
