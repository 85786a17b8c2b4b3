"""One parameter group's optimizer state held in flat buffers (PyTorch's "foreach").

An update rule is elementwise, so it gives the same numbers on the concatenation of
a group's parameters as on each one: a step then costs a dozen ops on long vectors
instead of a dozen ops per parameter. The per-parameter state entries that
state_dict() shows are views of the flat buffers, so the optimizer's state looks
exactly as in PyTorch; anything that breaks that (a loaded state dict, a parameter
without a gradient, mixed dtypes) falls back to per-parameter updates or a rebuild.
"""
from __future__ import annotations

from .. import ops as _ops
from .._tensor import Tensor


class FlatGroup:
    def __init__(self, state, params):
        self.params = list(params)
        self.shapes = [p.shape for p in self.params]
        self.sizes = [p.numel() for p in self.params]
        total = sum(self.sizes)
        ref = self.params[0]
        self.grad = _ops.empty(total, dtype=ref.dtype, device=ref.device)
        self.grad_views = self._views(self.grad)
        self.buffers = {}
        self.views = {}
        self._adopt(state)

    @staticmethod
    def usable(params):
        ref = params[0]
        return len(params) > 1 and all(p.dtype is ref.dtype and p.device == ref.device and
                                       p.grad is not None for p in params)

    def _views(self, flat):
        return [part.view(shape) for part, shape in zip(flat.split(self.sizes), self.shapes)]

    def _adopt(self, state):
        """Move existing per-parameter state into flat buffers (all checks first, so a
        refusal leaves the state as it was)."""
        entries = [state[p] for p in self.params]
        names = list(entries[0])
        for e in entries:
            if list(e) != names:
                raise _Inconsistent
        for name in names:
            values = [e[name] for e in entries]
            if not all(isinstance(v, Tensor) for v in values):
                raise _Inconsistent
            if values[0].dim() == 0:
                if any(v.dim() or float(v) != float(values[0]) for v in values[1:]):
                    raise _Inconsistent
            elif any(v.numel() != n or v.dtype is not p.dtype or v.device != p.device
                     for v, n, p in zip(values, self.sizes, self.params)):
                raise _Inconsistent
        for name in names:
            values = [e[name] for e in entries]
            if values[0].dim() == 0:                       # the step count: one shared value
                shared = values[0].detach().clone()
                for e in entries:
                    e[name] = shared
                self.buffers[name] = shared
            else:
                self._register(state, name,
                               _ops.cat([v.detach().reshape(-1) for v in values]))

    def _register(self, state, name, flat):
        self.buffers[name] = flat
        views = self._views(flat)
        self.views[name] = views
        for p, v in zip(self.params, views):
            state[p][name] = v

    def valid(self, state, params):
        if len(params) != len(self.params) or any(a is not b for a, b in zip(params, self.params)):
            return False
        for name, flat in self.buffers.items():
            views = self.views.get(name)
            for i, p in enumerate(self.params):
                entry = state[p].get(name)
                if entry is not (views[i] if views is not None else flat):
                    return False
        return all(len(state[p]) == len(self.buffers) for p in self.params)

    def gather_grads(self):
        for view, p in zip(self.grad_views, self.params):
            view.copy_(p.grad)
        return self.grad

    def gather_params(self):
        return _ops.cat([p.reshape(-1) for p in self.params])

    def add_to_params(self, delta):
        for p, part, shape in zip(self.params, delta.split(self.sizes), self.shapes):
            p.add_(part.view(shape))

    def state_view(self, state):
        return _FlatState(self, state)


class _Inconsistent(Exception):
    """Per-parameter state that cannot share flat buffers."""


class _FlatState:
    """The dict a rule sees in flat mode: names map to flat buffers; assignments
    become flat buffers with per-parameter views in the optimizer's state."""

    def __init__(self, flat, state):
        self._flat, self._state = flat, state

    def __bool__(self):
        return bool(self._flat.buffers)

    def __contains__(self, name):
        return name in self._flat.buffers

    def __getitem__(self, name):
        return self._flat.buffers[name]

    def get(self, name, default=None):
        return self._flat.buffers.get(name, default)

    def __setitem__(self, name, value):
        if value.dim() == 0:
            self._flat.buffers[name] = value
            for p in self._flat.params:
                self._state[p][name] = value
        else:
            self._flat._register(self._state, name, value)


def flat_group(cache, key, state, params):
    """The FlatGroup for params (cached per group), or None to update per parameter."""
    flat = cache.get(key)
    if not FlatGroup.usable(params):
        _retire(cache, key, state)
        return None
    if flat is not None and flat.valid(state, params):
        return flat
    _retire(cache, key, state)
    try:
        flat = FlatGroup(state, params)
    except _Inconsistent:
        return None
    cache[key] = flat
    return flat


def _retire(cache, key, state):
    """Give each parameter its own copy of the shared step count again, so that
    per-parameter updates count steps per parameter (as PyTorch does)."""
    flat = cache.pop(key, None)
    if flat is None:
        return
    for name, value in flat.buffers.items():
        if value.dim() == 0:
            for p in flat.params:
                if state[p].get(name) is value:
                    state[p][name] = value.clone()
