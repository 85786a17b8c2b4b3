"""Optimizer: parameter groups, per-parameter state, state_dict / load_state_dict in
PyTorch's format (state keyed by the parameter's position across groups)."""
from __future__ import annotations

import copy
from collections import defaultdict

from .._tensor import Tensor
from .._zero_grad import zero_grads
from ..autograd.grad_mode import enable_grad, no_grad
from ._flat import flat_group


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses implement `_rule` (the update of one parameter, run
    under no_grad on single parameters or on a group's flat concatenation)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. Please "
                            "use a list instead.")
        else:
            params = list(params)
        for i, p in enumerate(params):
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], Tensor):
                params[i] = p = p[1]          # named parameters
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for key, group in enumerate(self.param_groups):
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    self._step_group(key, group, params)
        return loss

    def _step_group(self, key, group, params):
        """Apply the rule to the group's parameters: all at once on flat buffers where
        they allow it (foreach is not False), one by one otherwise."""
        if self._fused_step is not None and _multi_tensor(group) and \
                self._fused_step(group, params):
            return
        maximize = group.get("maximize", False)
        flat = None
        if group.get("foreach") is not False and not self.__dict__.get("_per_parameter"):
            flat = flat_group(self.__dict__.setdefault("_flat", {}), key, self.state, params)
        if flat is not None:
            g = flat.gather_grads()
            if maximize:
                g.neg_()
            p = flat.gather_params() if self._needs_params(group) else None
            flat.add_to_params(self._rule(group, p, g, flat.state_view(self.state), True))
            return
        for p in params:
            g = p.grad.neg() if maximize else p.grad
            p.add_(self._rule(group, p, g, self.state[p], maximize))

    # optional: `_fused_step(group, params)` runs the whole group's update as fused
    # multi-tensor ops (ops/optim_ops.py) and returns True, or False to go per parameter
    _fused_step = None

    def _needs_params(self, group):
        """Whether the rule reads the parameters' values (weight decay)."""
        return bool(group.get("weight_decay"))

    def _rule(self, group, p, g, state, owned):
        """The update of one parameter p (or of a group's flat concatenation) with
        gradient g, updating `state` in place; returns what to add to p. `owned`: g is
        the optimizer's own buffer, which the rule may overwrite (no allocation)."""
        raise NotImplementedError

    # -- state dict ----------------------------------------------------------------------------
    def state_dict(self):
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: v for p, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict) or "state" not in state_dict or \
                "param_groups" not in state_dict:
            raise ValueError("optimizer state_dict must be a dict with 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match "
                                 "the size of optimizer's group")
        id_map = {}
        for g, s in zip(self.param_groups, saved_groups):
            for old, p in zip(s["params"], g["params"]):
                id_map[old] = p
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                p = id_map[key]
                state[p] = {k: self._cast_state(p, k, v) for k, v in value.items()}
            else:
                state[key] = copy.deepcopy(value)
        self.state = state
        new_groups = []
        for g, s in zip(self.param_groups, saved_groups):
            new = {k: copy.deepcopy(v) for k, v in s.items() if k != "params"}
            new["params"] = g["params"]
            new_groups.append(new)
        self.param_groups = new_groups

    @staticmethod
    def _cast_state(param, key, value):
        """A copy of a saved state value on the parameter's device (and, for floating
        state other than the step count, in its dtype)."""
        if not isinstance(value, Tensor):
            return copy.deepcopy(value)
        if key == "step":
            return value.detach().clone()
        if value.dtype.is_floating_point:
            return value.detach().to(device=param.device, dtype=param.dtype, copy=True)
        return value.detach().to(device=param.device, copy=True)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__dict__.update(copy.deepcopy(self.__getstate__(), memo))
        return new

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


def _multi_tensor(group):
    """PyTorch's options: fused=True, or foreach not False (our default: fused); a
    differentiable step stays in per-parameter ops that autograd records."""
    if group.get("differentiable"):
        return False
    return bool(group.get("fused")) or group.get("foreach") is not False


def by_device_and_dtype(params):
    """params split into lists of one device and dtype (what a fused row takes)."""
    lists = {}
    for p in params:
        lists.setdefault((p.device, p.dtype), []).append(p)
    return list(lists.values())


def step_count(state):
    """Increment and return the parameter's step counter (a float32 tensor, as PyTorch)."""
    from .. import ops
    t = state.get("step")
    if t is None:
        t = state["step"] = ops.tensor(0.0)
    t.add_(1)
    return t.item()


def weight_decay_terms(group, p, g):
    """(gradient, decoupled decay term or None) for the optimizers offering both kinds:
    decoupled decay (AdamW-style) is added to the step; L2 decay joins the gradient."""
    wd = group["weight_decay"]
    if not wd:
        return g, None
    if group["decoupled_weight_decay"]:
        return g, p * (-group["lr"] * wd)
    return g + p * wd, None
