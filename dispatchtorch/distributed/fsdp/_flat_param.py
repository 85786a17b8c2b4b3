"""One FSDP unit's flat parameter: its modules' parameters concatenated, padded to a
multiple of the world size, and this rank's shard kept as the nn.Parameter `_flat_param`.

Forward gathers the shard through an autograd Function whose backward reduce-scatters
the full gradient back to the shard, divided by the world size (PyTorch's average), so
autograd accumulates the shard's .grad and an optimizer over the flat parameters steps
the shards."""
from __future__ import annotations

from ... import distributed as dist
from ... import ops as _ops
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...nn.parameter import Parameter
from .api import ShardingStrategy


class ParamInfo:
    """Where one original parameter lives: module, attribute name, its name inside the
    unit, shape and offset in the flat parameter."""
    __slots__ = ("module", "name", "fqn", "shape", "numel", "offset", "shared")

    def __init__(self, module, name, fqn, shape, numel, offset, shared=False):
        self.module, self.name, self.fqn = module, name, fqn
        self.shape, self.numel, self.offset = shape, numel, offset
        self.shared = shared        # a second module's name for a parameter seen before


class _Unshard(Function):
    """shard -> the full flat parameter (compute dtype); backward: the full gradient
    reduce-scattered (all-reduced for NO_SHARD) to the shard and divided by the world."""

    @staticmethod
    def forward(ctx, shard, handle):
        ctx.handle = handle
        return handle.gather(shard)

    @staticmethod
    def backward(ctx, grad):
        return ctx.handle.reduce_grad(grad), None


class FlatParamHandle:
    def __init__(self, infos, params, group, strategy, mp, offload, compute_device):
        self.infos = infos
        self.group, self.strategy, self.mp = group, strategy, mp
        self.offload, self.compute_device = offload, compute_device
        self.world, self.rank = dist.get_world_size(group), dist.get_rank(group)
        self.numel = sum(p.numel() for p in params)
        self.sharded = strategy != ShardingStrategy.NO_SHARD
        world = self.world if self.sharded else 1
        self.padded = -(-self.numel // world) * world
        self.shard_numel = self.padded // world
        self.dtype = params[0].dtype
        self.sync_gradients = True
        self.unsharded_grad = None          # accumulated under no_sync
        self.placeholders = None
        self.orig = None                    # OrigParams with use_orig_params=True
        with no_grad():
            flat = _ops.cat([p.detach().reshape(-1) for p in params])
            if self.padded > self.numel:
                flat = _ops.cat([flat, _ops.zeros((self.padded - self.numel,), dtype=flat.dtype,
                                                  device=flat.device)])
            start = (self.rank if self.sharded else 0) * self.shard_numel
            shard = flat[start:start + self.shard_numel].clone()
            if offload:
                shard = shard.to("cpu")
        self.flat_param = Parameter(shard, requires_grad=params[0].requires_grad)

    # -- dtypes ------------------------------------------------------------------------------
    @property
    def compute_dtype(self):
        return self.mp.param_dtype if self.mp and self.mp.param_dtype is not None else self.dtype

    @property
    def reduce_dtype(self):
        if self.mp and self.mp.reduce_dtype is not None:
            return self.mp.reduce_dtype
        return self.compute_dtype

    # -- communication -----------------------------------------------------------------------
    def gather(self, shard, dtype=None):
        """The full padded flat parameter, in the compute dtype (or `dtype`)."""
        x = shard.detach()
        if self.offload:
            x = x.to(self.compute_device)
        x = x.to(dtype or self.compute_dtype)
        if not self.sharded:
            return x                                # NO_SHARD: the shard is the whole
        full = _ops.empty((self.padded,), dtype=x.dtype, device=x.device)
        dist.all_gather_into_tensor(full, x.contiguous(), group=self.group)
        return full

    def reduce_grad(self, grad):
        """The shard's gradient from the full one (None under no_sync: kept unsharded)."""
        g = grad.to(self.reduce_dtype)
        if self.unsharded_grad is not None:
            g = g + self.unsharded_grad.to(g.dtype)
        if not self.sync_gradients:
            self.unsharded_grad = g
            return None
        self.unsharded_grad = None
        if self.sharded:
            out = _ops.empty((self.shard_numel,), dtype=g.dtype, device=g.device)
            dist.reduce_scatter_tensor(out, g.contiguous(), group=self.group)
        else:
            out = g.contiguous().clone()
            dist.all_reduce(out, group=self.group)
        out = out / self.world
        return out.to(self.flat_param.dtype).to(self.flat_param.device)

    # -- the original parameters as views ----------------------------------------------------
    def unshard(self):
        """Gather (recorded by autograd) and point every module attribute at its view."""
        full = _Unshard.apply(self.flat_param, self)
        for info, view in zip(self.infos, self.views(full)):
            object.__setattr__(info.module, info.name, view)

    def reshard(self):
        """Outside forward the attributes are meta tensors of the right shape and dtype
        (PyTorch's are views of the freed unsharded storage): `m.bias is not None` holds,
        reading values fails. With use_orig_params they are the registered shard views."""
        if self.orig is not None:
            for info in self.infos:
                info.module.__dict__.pop(info.name, None)
            return
        if self.placeholders is None:
            self.placeholders = [_ops.empty(i.shape, dtype=self.dtype, device="meta")
                                 for i in self.infos]
        for info, t in zip(self.infos, self.placeholders):
            object.__setattr__(info.module, info.name, t)

    def views(self, full):
        return [full[i.offset:i.offset + i.numel].view(i.shape) for i in self.infos]

    def shard_of(self, tensors):
        """This rank's part of the padded flat concatenation of `tensors` (one per
        unshared info, in order), in their dtype."""
        flat = _ops.cat([t.detach().reshape(-1) for t in tensors])
        if self.padded > self.numel:
            flat = _ops.cat([flat, _ops.zeros((self.padded - self.numel,), dtype=flat.dtype,
                                              device=flat.device)])
        start = (self.rank if self.sharded else 0) * self.shard_numel
        return flat[start:start + self.shard_numel]

    def write_full(self, tensors):
        """Copy this rank's part of the full parameter made of `tensors` into the shard."""
        with no_grad():
            shard = self.shard_of([t.to(self.dtype) for t in tensors])
            self.flat_param.copy_(shard.to(self.flat_param.device))
