"""DistributedDataParallel: one model replica per rank, gradients averaged over the
ranks during backward (see _reducer.py), as torch.nn.parallel.DistributedDataParallel."""
from __future__ import annotations

from contextlib import contextmanager

from ... import distributed as dist
from ... import ops as _ops
from ...autograd.grad_mode import STATE, no_grad
from ..modules.module import Module
from ._comm_hooks import CommHookMixin
from ._join import JoinMixin
from ._reducer import FIRST_BUCKET_BYTES, Reducer


def _broadcast_coalesced(tensors, group, src):
    """Every tensor = src's, one broadcast per dtype and device (PyTorch's
    _sync_module_states flattens them the same way)."""
    groups = {}
    for t in tensors:
        groups.setdefault((t.dtype, t.device), []).append(t)
    with no_grad():
        for ts in groups.values():
            flat = _ops.cat([t.detach().reshape(-1) for t in ts])
            dist.broadcast(flat, src=src, group=group)
            at = 0
            for t in ts:
                n = t.numel()
                t.detach().copy_(flat[at:at + n].view(t.shape))
                at += n


class DistributedDataParallel(CommHookMixin, JoinMixin, Module):
    """Wrap `module`: rank 0's parameters and buffers are broadcast at construction;
    each backward all-reduces the gradients in buckets of `bucket_cap_mb` (launched as
    they fill, overlapping the rest of backward), leaving every rank with the average."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        Module.__init__(self)
        JoinMixin.__init__(self)
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p.device for _, p in params}
        if len(devices) > 1:
            raise ValueError(f"DistributedDataParallel's input module must be on a single "
                             f"device, found parameters on {sorted(str(d) for d in devices)}")
        self.module = module
        self.process_group = process_group
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        cap_bytes = int(self.bucket_cap_mb * 1024 * 1024)
        # PyTorch's BucketCapacityConfig: a 1 MiB first bucket only with the default cap
        first_bytes = FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap_bytes
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.device = next(iter(devices))
        self.world_size = dist.get_world_size(process_group)     # also: is the group initialised
        src = dist.get_global_rank(process_group, 0) if process_group is not None else 0
        self._src = src
        if init_sync:
            _broadcast_coalesced(list(module.parameters()) + list(module.buffers()),
                                 process_group, src)
        object.__setattr__(self, "reducer", Reducer(params, process_group, cap_bytes,
                                                    first_bytes, find_unused_parameters,
                                                    gradient_as_bucket_view, static_graph))

    def forward(self, *inputs, **kwargs):
        grad_sync = STATE.enabled and self.require_backward_grad_sync
        if grad_sync:
            self.reducer.prepare()
        self._pre_forward_join()
        if STATE.enabled:       # after the join notice, as PyTorch's (joined ranks shadow it)
            self.reducer.rebuild_buckets()
        self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        out = self.module(*inputs, **kwargs)
        # PyTorch's post-forward: the next forward syncs buffers only after a synced one
        self.require_forward_param_sync = grad_sync
        return out

    def _broadcast(self, tensors, src):
        _broadcast_coalesced(tensors, self.process_group, src)

    @contextmanager
    def no_sync(self):
        """Gradients of backward passes whose forward ran inside accumulate locally; the
        first synchronised backward after it all-reduces the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def __getstate__(self):
        raise TypeError("DistributedDataParallel cannot be pickled: save .module or its "
                        "state_dict()")

    def __del__(self):
        r = self.__dict__.get("reducer")
        if r is not None:
            r.remove()
