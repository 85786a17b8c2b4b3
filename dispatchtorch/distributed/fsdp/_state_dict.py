"""summon_full_params and the full state dict: every unit's flat parameter gathered and
its original parameters put back into their modules as nn.Parameters for the duration,
so Module.state_dict / load_state_dict see the model as it was before wrapping."""
from __future__ import annotations

import contextlib
from collections import OrderedDict

from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from .api import (FullStateDictConfig, StateDictSettings, StateDictType)

FSDP_PREFIX = "_fsdp_wrapped_module."
FLAT_PARAM = "_flat_param"


def _units(module, recurse=True):
    from .fully_sharded_data_parallel import FullyShardedDataParallel as FSDP
    if not recurse:
        return [module] if isinstance(module, FSDP) else []
    return [m for m in module.modules() if isinstance(m, FSDP)]


def _restore(unit, full, rank0_only, offload_to_cpu, requires_grad):
    h = unit._handle
    wrapped = unit._modules["_fsdp_wrapped_module"]
    wrapped._parameters.pop(FLAT_PARAM, None)
    made = {}
    for info, view in zip(h.infos, h.views(full)):
        if info.shared:
            p = made[info.offset]
        else:
            v = view.to("cpu") if offload_to_cpu else view
            p = made[info.offset] = Parameter(v, requires_grad=requires_grad)
        info.module.__dict__.pop(info.name, None)
        info.module._parameters[info.name] = p


def _put_back(unit, writeback):
    h = unit._handle
    if writeback:
        h.write_full([i.module._parameters[i.name] for i in h.infos if not i.shared])
    for info in h.infos:
        info.module._parameters.pop(info.name, None)
    if h.orig is not None:
        h.orig.register()
        return
    h.reshard()
    unit._modules["_fsdp_wrapped_module"]._parameters[FLAT_PARAM] = h.flat_param


@contextlib.contextmanager
def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                       offload_to_cpu=False, with_grads=False):
    """Inside, the FSDP units of module (all of them, or module itself with recurse=False)
    hold their original full parameters; with writeback, changes to them reach the
    shards on exit. rank0_only: only rank 0 unflattens (the others keep their shards)."""
    if with_grads:
        raise NotImplementedError("summon_full_params(with_grads=True) is not implemented in "
                                  "dispatchtorch")
    if writeback and rank0_only:
        raise NotImplementedError("writeback=True and rank0_only=True is not supported yet")
    if offload_to_cpu and not rank0_only:
        import warnings
        warnings.warn("offload_to_cpu=True and rank0_only=False may result in the"
                      "unsharded parameters being redundantly copied to CPU memory for "
                      "GPUs sharing the same CPU memory, which risks CPU OOM. We "
                      "recommend using offload_to_cpu=True with rank0_only=True.")
    with _summon(module, recurse, writeback, rank0_only, offload_to_cpu):
        yield


@contextlib.contextmanager
def _summon(module, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False):
    units = [u for u in _units(module, recurse) if not u._in_summon]
    restored = []
    try:
        for u in units:
            u._in_summon = True
            h = u._handle
            if h is None:
                continue
            with no_grad():
                full = h.gather(h.flat_param, dtype=h.dtype)
            if rank0_only and dist.get_rank(h.group) != 0:
                continue
            _restore(u, full, rank0_only, offload_to_cpu, h.flat_param.requires_grad)
            restored.append(u)
        yield
    finally:
        for u in restored:
            _put_back(u, writeback)
        for u in units:
            u._in_summon = False


def _clean(key):
    return key.replace(FSDP_PREFIX, "")


@contextlib.contextmanager
def _buffers_in_own_dtype(units):
    """Buffers cast by MixedPrecision(buffer_dtype) shown in their original dtype."""
    saved = []
    for u in units:
        for m, name, dtype in u._buffer_orig_dtypes:
            saved.append((m, name, m._buffers[name]))
            m._buffers[name] = m._buffers[name].to(dtype)
    try:
        yield
    finally:
        for m, name, b in saved:
            m._buffers[name] = b


def full_state_dict(fsdp, destination, prefix, keep_vars):
    """The original names (FSDP prefixes dropped) and full values, cloned; empty off rank
    0 with rank0_only; on the CPU with offload_to_cpu."""
    _check_type(fsdp)
    cfg = fsdp._state_dict_config
    rank0_only = getattr(cfg, "rank0_only", False)
    out = OrderedDict() if destination is None else destination
    with _summon(fsdp, writeback=False, rank0_only=rank0_only,
                 offload_to_cpu=cfg.offload_to_cpu):
        if rank0_only and dist.get_rank(fsdp.process_group) != 0:
            return out
        with _buffers_in_own_dtype(_units(fsdp)):
            raw = Module.state_dict(fsdp, prefix=prefix, keep_vars=True)
            for k, v in raw.items():
                v = v.detach().clone()
                out[_clean(k)] = v.to("cpu") if cfg.offload_to_cpu else v
    return out


def load_full_state_dict(fsdp, state_dict, strict):
    """Load a full state dict (original names) into the shards."""
    _check_type(fsdp)
    with _summon(fsdp, writeback=True):
        real = {_clean(k): k for k in Module.state_dict(fsdp, keep_vars=True)}
        renamed = OrderedDict((real.get(k, k), v) for k, v in state_dict.items())
        return Module.load_state_dict(fsdp, renamed, strict)


def _check_type(fsdp):
    if fsdp._state_dict_type != StateDictType.FULL_STATE_DICT:
        raise NotImplementedError(f"FullyShardedDataParallel: {fsdp._state_dict_type} is not "
                                  "implemented in dispatchtorch (it needs DTensor / "
                                  "ShardedTensor); use StateDictType.FULL_STATE_DICT")


def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
    if not isinstance(state_dict_type, StateDictType):
        raise TypeError(f"state_dict_type must be a StateDictType, got {state_dict_type!r}")
    if state_dict_type != StateDictType.FULL_STATE_DICT:
        raise NotImplementedError(f"FullyShardedDataParallel: {state_dict_type} is not "
                                  "implemented in dispatchtorch (it needs DTensor / "
                                  "ShardedTensor); use StateDictType.FULL_STATE_DICT")
    cfg = FullStateDictConfig() if state_dict_config is None else state_dict_config
    if not isinstance(cfg, FullStateDictConfig):
        raise RuntimeError(f"Expected state_dict_config of type FullStateDictConfig but got "
                           f"{type(cfg)}")
    units = _units(module)
    if not units:
        raise ValueError("The module has no FullyShardedDataParallel instance")
    prev = StateDictSettings(units[0]._state_dict_type, units[0]._state_dict_config,
                             units[0]._optim_state_dict_config)
    for u in units:
        u._state_dict_type, u._state_dict_config = state_dict_type, cfg
        u._optim_state_dict_config = optim_state_dict_config
    return prev


@contextlib.contextmanager
def state_dict_type_context(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
    """Inside, state_dict()/load_state_dict() of the FSDP units in module use this type."""
    prev = set_state_dict_type(module, state_dict_type, state_dict_config,
                               optim_state_dict_config)
    try:
        yield
    finally:
        for u in _units(module):
            u._state_dict_type, u._state_dict_config = prev.state_dict_type, prev.state_dict_config
            u._optim_state_dict_config = prev.optim_state_dict_config


def install_load_hooks(fsdp):
    """A unit loaded by a plain parent's load_state_dict (not through an FSDP root): a
    pre-hook gathers the unit and renames the dict's original keys to the wrapped ones,
    the post-hook writes the loaded values back to the shards and puts the keys back."""
    pending = []

    def pre(module, state_dict, prefix, *args):
        if module._in_summon:
            return
        ctx = _summon(module, writeback=True)
        ctx.__enter__()
        real = {_clean(k): k for k in Module.state_dict(module, prefix=prefix, keep_vars=True)}
        renamed = [(c, r) for c, r in real.items() if c != r and c in state_dict]
        order = list(state_dict)
        for c, r in renamed:
            state_dict[r] = state_dict.pop(c)
        pending.append((ctx, state_dict, renamed, order))

    def post(module, incompatible):
        if not pending:
            return
        ctx, state_dict, renamed, order = pending.pop()
        for c, r in renamed:
            state_dict[c] = state_dict.pop(r)
        state_dict.update([(k, state_dict.pop(k)) for k in order if k in state_dict])
        ctx.__exit__(None, None, None)

    fsdp._register_load_state_dict_pre_hook(pre, with_module=True)
    fsdp.register_load_state_dict_post_hook(post)
