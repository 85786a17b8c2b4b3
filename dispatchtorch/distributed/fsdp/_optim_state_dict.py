"""FSDP.optim_state_dict / optim_state_dict_to_load: the optimizer's per-shard states of a
flat parameter gathered and split into its original parameters, keyed by their names
(PyTorch's full optimizer state dict), and back to this rank's shards for
optimizer.load_state_dict."""
from __future__ import annotations

import warnings

from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .api import FullOptimStateDictConfig

FSDP_PREFIX = "_fsdp_wrapped_module."


def _clean(key):
    return key.replace(FSDP_PREFIX, "")


def _names(model):
    """id(param) -> (handle or None, [original names]) for every parameter of model."""
    from .fully_sharded_data_parallel import FullyShardedDataParallel as FSDP
    if any(isinstance(m, FSDP) and m._use_orig_params for m in model.modules()):
        raise NotImplementedError("FSDP.optim_state_dict / optim_state_dict_to_load with "
                                  "use_orig_params=True are not implemented in dispatchtorch")
    out = {}
    for prefix, m in model.named_modules():
        if isinstance(m, FSDP) and m._handle is not None:
            base = _clean(prefix + "." if prefix else "")
            h = m._handle
            out[id(h.flat_param)] = (h, [base + i.fqn for i in h.infos if not i.shared])
    for name, p in model.named_parameters():
        out.setdefault(id(p), (None, [_clean(name)]))
    return out


def _is_flat_state(v, h):
    return isinstance(v, Tensor) and v.dim() == 1 and v.numel() == h.shard_numel


def _ordered(optim):
    return [p for g in optim.param_groups for p in g["params"]]


def optim_state_dict(model, optim, optim_state_dict=None, group=None):
    """The full optimizer state dict: state and param_groups keyed by original names."""
    cfg = getattr(model, "_optim_state_dict_config", None) or FullOptimStateDictConfig()
    return _gathered(model, optim, optim_state_dict, cfg.offload_to_cpu,
                     getattr(cfg, "rank0_only", False))


def _gathered(model, optim, optim_state_dict, offload_to_cpu, rank0_only):
    osd = optim.state_dict() if optim_state_dict is None else optim_state_dict
    names = _names(model)
    state = {}
    with no_grad():
        for i, p in enumerate(_ordered(optim)):
            h, fqns = names[id(p)]
            s = osd["state"].get(i)
            if s is None:
                continue
            if h is None:
                state[fqns[0]] = dict(s)
                continue
            pieces = {k: (h.gather(v, dtype=v.dtype)[:h.numel] if _is_flat_state(v, h) else v)
                      for k, v in s.items()}
            infos = [info for info in h.infos if not info.shared]
            for fqn, info in zip(fqns, infos):
                state[fqn] = {k: (v[info.offset:info.offset + info.numel].view(info.shape).clone()
                                  if _is_flat_state(s[k], h) else v)
                              for k, v in pieces.items()}
    if offload_to_cpu:
        state = {n: {k: v.to("cpu") if isinstance(v, Tensor) else v for k, v in s.items()}
                 for n, s in state.items()}
    if rank0_only and dist.get_rank(model.process_group) != 0:
        return {}
    groups = []
    for g in osd["param_groups"]:
        g = dict(g)
        ps = _ordered(optim)
        g["params"] = [n for i in g["params"] for n in names[id(ps[i])][1]]
        groups.append(g)
    return {"state": state, "param_groups": groups}


def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                             load_directly=False, group=None):
    """A full optimizer state dict (from optim_state_dict) as this rank's
    optimizer.state_dict(), ready for optim.load_state_dict (done with load_directly)."""
    if is_named_optimizer:
        raise NotImplementedError("optim_state_dict_to_load(is_named_optimizer=True) is not "
                                  "implemented in dispatchtorch")
    out = _to_shards(model, _ordered(optim), optim_state_dict)
    if load_directly:
        optim.load_state_dict(out)
    return out


def _to_shards(model, params, optim_state_dict):
    names = _names(model)
    full = optim_state_dict["state"]
    state, index = {}, {}
    for i, p in enumerate(params):
        h, fqns = names[id(p)]
        for n in fqns:
            index[n] = i
        if fqns[0] not in full:
            continue
        if h is None:
            state[i] = dict(full[fqns[0]])
            continue
        first, shard = full[fqns[0]], {}
        infos = [info for info in h.infos if not info.shared]
        for k, v in first.items():
            if isinstance(v, Tensor) and tuple(v.shape) == tuple(infos[0].shape) and v.dim() > 0:
                parts = [full[n][k].to(p.device) for n in fqns]
                shard[k] = h.shard_of(parts).clone()
            else:
                shard[k] = v
        state[i] = shard
    groups = []
    for g in optim_state_dict["param_groups"]:
        g = dict(g)
        ids = []
        for n in g["params"]:
            if index[n] not in ids:
                ids.append(index[n])
        g["params"] = ids
        groups.append(g)
    return {"state": state, "param_groups": groups}


def _deprecated(old, new):
    warnings.warn(f"``FullyShardedDataParallel.{old}``is being deprecated and is replaced by "
                  f"``FullyShardedDataParallel.{new}``. ``FullyShardedDataParallel.{old}`` may "
                  "be removed after PyTorch 2.2.", FutureWarning, stacklevel=3)


def full_optim_state_dict(model, optim, optim_input=None, rank0_only=True, group=None):
    """The older name of optim_state_dict (rank 0 only by default, on the CPU)."""
    _deprecated("full_optim_state_dict", "optim_state_dict")
    if optim_input is not None:
        raise NotImplementedError("full_optim_state_dict(optim_input=...) is not implemented "
                                  "in dispatchtorch; pass the optimizer")
    return _gathered(model, optim, None, True, rank0_only)


def shard_full_optim_state_dict(full_optim_state_dict, model, optim_input=None, optim=None):
    """The older name of optim_state_dict_to_load: without optim, the ids follow
    model.parameters()."""
    _deprecated("shard_full_optim_state_dict", "optim_state_dict_to_load")
    if optim_input is not None:
        raise NotImplementedError("shard_full_optim_state_dict(optim_input=...) is not "
                                  "implemented in dispatchtorch; pass optim=")
    params = _ordered(optim) if optim is not None else list(model.parameters())
    return _to_shards(model, params, full_optim_state_dict)
