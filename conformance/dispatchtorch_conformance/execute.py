"""Running one sample on one device and bringing everything back to the host.

The same sample runs once on the CPU reference and once on the backend under
test; what comes back (`Run`) holds host copies only, so comparing two runs never
touches a device again.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import dispatchtorch as torch
from dispatchtorch.backend import FLOATING

from .case import Arr
from .dtypes import random


@dataclass
class HostTensor:
    dtype: str
    shape: tuple
    device: str
    values: np.ndarray
    requires_grad: bool = False


@dataclass
class Run:
    """What one execution left behind, on the host."""
    outputs: list = field(default_factory=list)    # [(path, HostTensor | value)]
    bases: list = field(default_factory=list)      # each input's storage after the call
    exc: BaseException | None = None
    where: str = ""                                 # the stage that raised
    extra: dict = field(default_factory=dict)


def upload(obj, device, requires_grad, leaves):
    """Arr -> device tensor (through its base and view); lists, tuples, dicts recursed."""
    if isinstance(obj, Arr):
        rg = requires_grad and obj.grad and obj.dtype in FLOATING
        base = torch.tensor(obj.base, device=device, requires_grad=rg)
        leaves.append(base)
        return obj.view(base)
    if isinstance(obj, list):
        return [upload(o, device, requires_grad, leaves) for o in obj]
    if isinstance(obj, tuple):
        return tuple(upload(o, device, requires_grad, leaves) for o in obj)
    if isinstance(obj, dict):
        return {k: upload(v, device, requires_grad, leaves) for k, v in obj.items()}
    return obj


def host(t) -> HostTensor:
    d = t.detach()
    if d.device.type != "cpu":
        d = d.cpu()
    return HostTensor(t.dtype.name, tuple(t.shape), str(t.device), np.array(d.numpy(), copy=True),
                      bool(t.requires_grad))


def flatten(out, path="out"):
    """[(path, Tensor | value)] for a result that may be a nested tuple or list."""
    if isinstance(out, torch.Tensor):
        return [(path, out)]
    if isinstance(out, (tuple, list)):
        items = []
        for i, o in enumerate(out):
            items.extend(flatten(o, f"{path}[{i}]"))
        return items
    return [(path, out)]


def _to_host_items(items):
    return [(p, host(v) if isinstance(v, torch.Tensor) else v) for p, v in items]


def _call(fn, args, kwargs):
    return fn(*args, **kwargs)


def forward(case, sample, device) -> Run:
    """Call the op; keep its outputs and every input's storage afterwards."""
    run = Run()
    leaves = []
    try:
        run.where = "upload"
        args = upload(sample.args, device, False, leaves)
        kwargs = upload(sample.kwargs, device, False, leaves)
        run.where = "call"
        out = _call(case.fn, args, kwargs)
        run.where = "readback"
        run.outputs = _to_host_items(flatten(out))
        run.bases = [host(b) for b in leaves]
    except Exception as exc:        # noqa: BLE001 (any error is a verdict)
        run.exc = exc
    return run


def cotangents(outs, seed):
    """A random cotangent per output, from a seed shared by both runs."""
    rng = np.random.default_rng(seed)
    return [random(rng, o.shape, o.dtype.name, -1.0, 1.0) for o in outs]


def gradient(case, sample, device, seed) -> Run:
    """The gradients of the floating outputs, for a random cotangent, with respect
    to every floating input's storage."""
    run = Run()
    leaves = []
    try:
        run.where = "upload"
        args = upload(sample.args, device, True, leaves)
        kwargs = upload(sample.kwargs, device, True, leaves)
        run.where = "call"
        out = _call(case.fn, args, kwargs)
        outs = [t for _, t in flatten(out) if isinstance(t, torch.Tensor) and t.requires_grad]
        inputs = [t for t in leaves if t.requires_grad]
        run.extra["n_outputs"], run.extra["n_inputs"] = len(outs), len(inputs)
        if not outs or not inputs:
            return run
        cots = [torch.tensor(c, device=o.device) for c, o in zip(cotangents(outs, seed), outs)]
        run.where = "backward"
        grads = torch.autograd.grad(outs, inputs, cots, allow_unused=True)
        run.where = "readback"
        run.outputs = [(f"grad[{i}]", host(g) if g is not None else None)
                       for i, g in enumerate(grads)]
    except Exception as exc:        # noqa: BLE001
        run.exc = exc
    return run


def inplace(case, sample, device) -> Run:
    """The in-place variant on fresh inputs: does it return self, and what is in
    every input's storage afterwards (self may be a view of a wider storage)."""
    run = Run()
    leaves = []
    try:
        run.where = "upload"
        args = upload(sample.args, device, False, leaves)
        kwargs = upload(sample.kwargs, device, False, leaves)
        run.where = "call"
        r = case.call_inplace(args, kwargs)
        run.extra["returns_self"] = r is args[0]
        run.where = "readback"
        run.outputs = _to_host_items([("self", args[0])])
        run.bases = [host(b) for b in leaves]
    except Exception as exc:        # noqa: BLE001
        run.exc = exc
    return run


ALIAS_DIRECTIONS = ("view->base", "base->view")


def alias_fn(direction):
    """The alias check writing one way: through the view ("view->base") or into the
    viewed storage ("base->view", which also holds for views that overlap themselves)."""
    return alias if direction == "view->base" else alias_back


def _first_result(case, sample, device, run, leaves):
    """Upload the sample (its leaves into `leaves`), call the op: its first result."""
    run.where = "upload"
    args = upload(sample.args, device, False, leaves)
    kwargs = upload(sample.kwargs, device, False, leaves)
    run.where = "call"
    return flatten(_call(case.fn, args, kwargs))[0][1]


def _read_back(run, view, sample, leaves):
    """After a write through one side of an alias: what both sides hold now."""
    run.where = "readback"
    run.outputs = _to_host_items([("view", view)])
    run.bases = [host(b) for b in leaves]
    run.extra["before"] = [a.base for a in sample.arrays()]


def alias(case, sample, device) -> Run:
    """Write new values through the op's result (a view): the first input's storage
    must change the same way on the backend as on the CPU."""
    run = Run()
    leaves = []
    try:
        view = _first_result(case, sample, device, run, leaves)
        if not isinstance(view, torch.Tensor) or view.numel() == 0 or \
                overlaps(tuple(view.shape), view.stride()):
            run.extra["skipped"] = "the result is empty or overlaps itself"
            return run
        run.where = "write"
        view.copy_(torch.tensor(changed(host(view).values), device=view.device))
        _read_back(run, view, sample, leaves)
    except Exception as exc:        # noqa: BLE001
        run.exc = exc
    return run


def alias_back(case, sample, device) -> Run:
    """Write new values into the first input's storage after the op: reading the
    result (a view) must show them on the backend as on the CPU."""
    run = Run()
    leaves = []
    try:
        view = _first_result(case, sample, device, run, leaves)
        if not isinstance(view, torch.Tensor) or view.numel() == 0 or not leaves:
            run.extra["skipped"] = "the result is empty"
            return run
        run.extra["view_before"] = host(view).values
        run.where = "write"
        base = leaves[0]
        base.copy_(torch.tensor(changed(host(base).values), device=base.device))
        _read_back(run, view, sample, leaves)
    except Exception as exc:        # noqa: BLE001
        run.exc = exc
    return run


def changed(values):
    """Values that differ from `values` everywhere (so that a write is visible)."""
    if values.dtype.kind == "b":
        return ~values
    if values.dtype.kind in "iu":
        return values + np.ones((), values.dtype)          # wraps at the maximum
    v = values.astype(np.float32)
    return np.where(np.abs(v) < 1e3, v + 1.0, -v).astype(values.dtype)


def overlaps(shape, stride):
    """Whether two indices of a view reach the same element (writes would race)."""
    extent = 0
    for st, n in sorted((st, n) for n, st in zip(shape, stride) if n > 1):
        if st <= extent:
            return True
        extent += (n - 1) * st
    return False
