"""FullyShardedDataParallel (FSDP1), as torch.distributed.fsdp.FullyShardedDataParallel:
each unit keeps one flat parameter sharded over the ranks (see _flat_param.py; with
use_orig_params=True the original parameters are views of it, _orig_params.py), gathers
it for its forward, and autograd reduce-scatters its gradient back to the shard."""
from __future__ import annotations

import contextlib
import warnings

from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from ...nn.parallel.distributed import _broadcast_coalesced
from ._clip import clip_grad_norm
from ._flat_param import FlatParamHandle, ParamInfo
from ._orig_params import OrigParams
from ._optim_state_dict import (full_optim_state_dict, optim_state_dict,
                                optim_state_dict_to_load, shard_full_optim_state_dict)
from ._state_dict import (full_state_dict, install_load_hooks, load_full_state_dict,
                          state_dict_type_context, summon_full_params)
from .api import (BackwardPrefetch, CPUOffload, FullStateDictConfig, MixedPrecision,
                  ShardingStrategy, StateDictType)
from .wrap import recursive_wrap

FSDP_WRAPPED_MODULE = "_fsdp_wrapped_module"
FSDP_PREFIX = FSDP_WRAPPED_MODULE + "."
FLAT_PARAM = "_flat_param"


def _check_arguments(module, sharding_strategy, cpu_offload, mixed_precision,
                     backward_prefetch):
    if not isinstance(module, Module):
        raise TypeError(f"FullyShardedDataParallel: module must be an nn.Module, got "
                        f"{type(module).__name__}")
    if not isinstance(sharding_strategy, ShardingStrategy):
        raise TypeError(f"FullyShardedDataParallel: sharding_strategy must be a ShardingStrategy "
                        f"or None, got {sharding_strategy!r}")
    if sharding_strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
        raise NotImplementedError(f"FullyShardedDataParallel: sharding_strategy="
                                  f"{sharding_strategy} (HYBRID_SHARD, _HYBRID_SHARD_ZERO2) is "
                                  "not implemented in dispatchtorch; use FULL_SHARD, "
                                  "SHARD_GRAD_OP or NO_SHARD")
    if cpu_offload is not None and not isinstance(cpu_offload, CPUOffload):
        raise TypeError(f"FullyShardedDataParallel: cpu_offload must be a CPUOffload or None, "
                        f"got {type(cpu_offload).__name__}")
    if mixed_precision is not None and not isinstance(mixed_precision, MixedPrecision):
        raise TypeError(f"FullyShardedDataParallel: mixed_precision must be a MixedPrecision or "
                        f"None, got {type(mixed_precision).__name__}")
    if mixed_precision is not None and mixed_precision.keep_low_precision_grads:
        raise NotImplementedError("FullyShardedDataParallel: MixedPrecision("
                                  "keep_low_precision_grads=True) is not implemented in "
                                  "dispatchtorch")
    if backward_prefetch is not None and not isinstance(backward_prefetch, BackwardPrefetch):
        raise TypeError(f"FullyShardedDataParallel: backward_prefetch must be a BackwardPrefetch "
                        f"or None, got {backward_prefetch!r}")


def _owned_modules(module, ignored):
    """The modules whose parameters this unit flattens: not inside a nested unit or an
    ignored module, as (prefix, module) in registration order."""
    out, stack = [], [("", module)]
    while stack:
        prefix, m = stack.pop()
        out.append((prefix, m))
        kids = [(prefix + n + ".", c) for n, c in m._modules.items()
                if c is not None and not isinstance(c, FullyShardedDataParallel) and c not in ignored]
        stack.extend(reversed(kids))
    return out


def _cast_inputs(value, dtype):
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


class FullyShardedDataParallel(Module):
    """Shard `module`'s parameters over the ranks of process_group (see the module doc)."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None, device_id=None,
                 sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
                 use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None else sharding_strategy
        _check_arguments(module, strategy, cpu_offload, mixed_precision, backward_prefetch)
        if device_mesh is not None:
            if process_group is not None:
                raise ValueError("Cannot pass both process_group and device_mesh at the same "
                                 "time. Please just pass only one of them.")
            if device_mesh.ndim != 1:
                raise NotImplementedError("FullyShardedDataParallel: a device_mesh of more "
                                          "than one dimension (HYBRID_SHARD) is not implemented")
            process_group = device_mesh.get_group(0)
        if isinstance(process_group, tuple):
            raise NotImplementedError("FullyShardedDataParallel: a (intra-node, inter-node) "
                                      "process group pair (HYBRID_SHARD) is not implemented")
        if dist.get_world_size(process_group) == 1 and strategy != ShardingStrategy.NO_SHARD:
            warnings.warn(f"FSDP is switching to use `NO_SHARD` instead of {strategy} since the "
                          "world size is 1.")
            strategy = ShardingStrategy.NO_SHARD
        self.process_group = process_group
        self.sharding_strategy = strategy
        self.cpu_offload = cpu_offload or CPUOffload()
        self.mixed_precision = mixed_precision
        self.backward_prefetch, self.forward_prefetch = backward_prefetch, forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self._use_orig_params = bool(use_orig_params)
        self._is_root = True
        self._in_summon = False
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        self._optim_state_dict_config = None
        ignored = set(ignored_modules or ())
        ignored_params = {id(s) for s in (ignored_states or ()) if not isinstance(s, Module)}
        ignored.update(s for s in (ignored_states or ()) if isinstance(s, Module))
        for m in list(ignored):
            ignored.update(m.modules())
        ignored_params.update(id(p) for m in ignored for p in m.parameters())
        self._ignored_modules = ignored
        if auto_wrap_policy is not None:
            kwargs = dict(process_group=process_group, sharding_strategy=strategy,
                          cpu_offload=cpu_offload, backward_prefetch=backward_prefetch,
                          mixed_precision=mixed_precision, ignored_modules=ignored_modules,
                          param_init_fn=param_init_fn, device_id=device_id,
                          sync_module_states=sync_module_states,
                          forward_prefetch=forward_prefetch,
                          limit_all_gathers=limit_all_gathers, use_orig_params=use_orig_params)
            recursive_wrap(module, auto_wrap_policy, FullyShardedDataParallel, ignored,
                           ignored_params, only_wrap_children=True, **kwargs)
        self._init_params(module, ignored, param_init_fn, device_id)
        self.add_module(FSDP_WRAPPED_MODULE, module)
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m._is_root = False
        owned = _owned_modules(module, ignored)
        if sync_module_states:
            tensors = [p for _, m in owned for p in m._parameters.values() if p is not None]
            tensors += [b for _, m in owned for b in m._buffers.values() if b is not None]
            if tensors:
                _broadcast_coalesced(tensors, process_group,
                                     dist.get_global_rank(process_group, 0)
                                     if process_group is not None else 0)
        self._handle = self._flatten(module, owned, ignored_params)
        self._buffer_orig_dtypes = self._cast_buffers(owned)
        install_load_hooks(self)

    def _init_params(self, module, ignored, param_init_fn, device_id):
        """Materialise meta parameters (param_init_fn, else to_empty + reset_parameters)
        and move the module to device_id."""
        device = None
        if device_id is not None:
            from ..._device import device as _device
            device = _device("cuda", device_id) if isinstance(device_id, int) else _device(device_id)
        if any(p.device.type == "meta" for p in module.parameters()):
            if param_init_fn is not None:
                param_init_fn(module)
            else:
                module.to_empty(device=device or "cpu")
                with no_grad():
                    for m in module.modules():
                        if hasattr(m, "reset_parameters") and m not in ignored:
                            m.reset_parameters()
        if device is not None and any(p.device != device for p in module.parameters()):
            module.to(device)

    def _flatten(self, module, owned, ignored_params):
        infos, params, seen, at = [], [], {}, 0
        for prefix, m in owned:
            for name, p in m._parameters.items():
                if p is None or id(p) in ignored_params:
                    continue
                if id(p) in seen:
                    first = seen[id(p)]
                    infos.append(ParamInfo(m, name, prefix + name, first.shape, first.numel,
                                           first.offset, shared=True))
                    continue
                info = ParamInfo(m, name, prefix + name, tuple(p.shape), p.numel(), at)
                seen[id(p)] = info
                infos.append(info)
                params.append(p)
                at += p.numel()
        if not params:
            return None
        if len({p.dtype for p in params}) > 1:
            a, b = sorted({str(p.dtype) for p in params})[:2]
            raise ValueError(f"Must flatten tensors with uniform dtype but got {a} and {b}")
        if len({p.requires_grad for p in params}) > 1:
            if self._use_orig_params:
                raise NotImplementedError("FullyShardedDataParallel: parameters with and "
                                          "without requires_grad in one FSDP unit with "
                                          "use_orig_params=True are not implemented in "
                                          "dispatchtorch; wrap them in different units")
            raise ValueError("Must flatten tensors with uniform `requires_grad` when "
                             "`use_orig_params=False`")
        device = params[0].device
        handle = FlatParamHandle(infos, params, self.process_group, self.sharding_strategy,
                                 self.mixed_precision, self.cpu_offload.offload_params, device)
        for info in infos:
            del info.module._parameters[info.name]
        if self._use_orig_params:
            handle.orig = OrigParams(handle)
            handle.orig.register()
            return handle
        handle.reshard()
        module.register_parameter(FLAT_PARAM, handle.flat_param)
        return handle

    def _cast_buffers(self, owned):
        mp = self.mixed_precision
        if mp is None or mp.buffer_dtype is None:
            return []
        out = []
        with no_grad():
            for _, m in owned:
                for name, b in m._buffers.items():
                    if b is not None and b.is_floating_point() and b.dtype != mp.buffer_dtype:
                        out.append((m, name, b.dtype))
                        m._buffers[name] = b.to(mp.buffer_dtype)
        return out

    # -- forward -----------------------------------------------------------------------------
    @property
    def module(self):
        """The wrapped module."""
        return self._modules[FSDP_WRAPPED_MODULE]

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            inner = self.__dict__.get("_modules", {}).get(FSDP_WRAPPED_MODULE)
            if inner is None:
                raise
            return getattr(inner, name)

    def __getitem__(self, key):
        return self._modules[FSDP_WRAPPED_MODULE].__getitem__(key)

    def forward(self, *args, **kwargs):
        if self._in_summon:
            raise AssertionError("FSDP forward cannot run inside summon_full_params")
        mp = self.mixed_precision
        if mp is not None and mp.param_dtype is not None and (
                mp.cast_forward_inputs or (self._is_root and mp.cast_root_forward_inputs)):
            args, kwargs = _cast_inputs(args, mp.param_dtype), _cast_inputs(kwargs, mp.param_dtype)
        h = self._handle
        if h is None:
            return self.module(*args, **kwargs)
        h.unshard()
        try:
            return self.module(*args, **kwargs)
        finally:
            h.reshard()

    # -- the FSDP API ------------------------------------------------------------------------
    def _units(self):
        return [m for m in self.modules() if isinstance(m, FullyShardedDataParallel)]

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside keep their (unsharded) gradients; the first backward
        outside reduce-scatters the accumulated sum."""
        if not self._is_root:
            raise RuntimeError("`no_sync()` on inner FSDP instances is not supported. Please "
                               "call `no_sync()` on root FSDP module.")
        handles = [u._handle for u in self._units() if u._handle is not None]
        old = [h.sync_gradients for h in handles]
        for h in handles:
            h.sync_gradients = False
        try:
            yield
        finally:
            for h, o in zip(handles, old):
                h.sync_gradients = o

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clip the gradients of every parameter by their total norm over all ranks'
        shards; returns that norm."""
        if not self._is_root:
            raise RuntimeError("`clip_grad_norm_()` should only be called on the root FSDP "
                               "instance")
        sharded = {id(p) for u in self._units() if u._handle is not None and u._handle.sharded
                   for p in ([u._handle.flat_param] if u._handle.orig is None
                             else u._handle.orig.params)}
        return clip_grad_norm(list(self.parameters()), sharded, max_norm, norm_type,
                              self.process_group)

    summon_full_params = staticmethod(summon_full_params)
    optim_state_dict = staticmethod(optim_state_dict)
    optim_state_dict_to_load = staticmethod(optim_state_dict_to_load)
    full_optim_state_dict = staticmethod(full_optim_state_dict)
    shard_full_optim_state_dict = staticmethod(shard_full_optim_state_dict)
    state_dict_type = staticmethod(state_dict_type_context)

    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
        """Set the state dict type of every FSDP unit in module; returns the previous."""
        from ._state_dict import set_state_dict_type
        return set_state_dict_type(module, state_dict_type, state_dict_config,
                                   optim_state_dict_config)

    @staticmethod
    def fsdp_modules(module, root_only=False):
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return [u for u in units if u._is_root] if root_only else units

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args or self._in_summon:
            return super().state_dict(*args, destination=destination, prefix=prefix,
                                      keep_vars=keep_vars)
        return full_state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        return load_full_state_dict(self, state_dict, strict)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Inside summon_full_params, the names drop the FSDP prefix (as PyTorch's)."""
        for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
            yield (name.replace(FSDP_PREFIX, "") if self._in_summon else name), p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        for name, b in super().named_buffers(prefix, recurse, remove_duplicate):
            yield (name.replace(FSDP_PREFIX, "") if self._in_summon else name), b

    def __getstate__(self):
        raise TypeError("FullyShardedDataParallel cannot be pickled: save its state_dict()")


__all__ = ["FullyShardedDataParallel"]
