"""swap_in_optimizer_params_and_state: run an optimizer's API on other parameters and
an optimizer.state_dict()-shaped state, then restore the live ones (PyTorch 2.13's)."""
from __future__ import annotations

import contextlib
from collections import defaultdict

from .._tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _check(optimizer, swapin_parameters, swapin_optim_state):
    """Validate everything first; returns (state by packed id, [(group, swap-in group,
    its parameters)])."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           f"packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           f"packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           f"dictionaries.")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than "
                           "the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, infos = 0, set(), []
    for idx, (group, swap) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(swap, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
        ids = swap.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                               f"param_groups[*]['params'] entries keyed by packed parameter ids.")
        if len(group["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                               f"params than the live optimizer param group.")
        swapin_only = [k for k in swap if k not in group]
        live_only = [k for k in group if k not in swap]
        if swapin_only or live_only:
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys "
                               f"to exactly match the live optimizer group keys for group {idx}. "
                               f"Keys only in swap-in: {swapin_only}. Keys only in live: "
                               f"{live_only}.")
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               f"optimizer.param_groups ordering.")
        infos.append((group, swap, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra keys "
                           f"{extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block, optimizer's groups hold swapin_parameters (in
    named_parameters() order) and its state is swapin_optim_state's; in-place changes to
    those tensors are what remains afterwards."""
    state, infos = _check(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    flat_cache = optimizer.__dict__.pop("_flat", None)
    try:
        swapped = defaultdict(dict)
        for group, swap, params in infos:
            group["params"] = params
            for k, v in swap.items():
                if k != "params":
                    group[k] = v
            for p, pid in zip(params, swap["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        # per-parameter updates: flat buffers would copy the given state, not update it
        optimizer.__dict__["_per_parameter"] = True
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
        optimizer.__dict__.pop("_per_parameter", None)
        optimizer.__dict__.pop("_flat", None)
        if flat_cache is not None:
            optimizer.__dict__["_flat"] = flat_cache
