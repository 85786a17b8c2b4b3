"""Selective activation checkpointing's two modes (torch.utils.checkpoint's
create_selective_checkpoint_contexts returns one of each): the forward's, which asks the
policy about every op it runs and keeps the outputs of those to save, and the
recomputation's, which hands those outputs back instead of running the op again.

PyTorch's modes are TorchDispatchModes and see ATen operators. Here they see what the
executor launches, at its choke point (docs/architecture.md, "The choke point"): while a
mode is open on some thread, every kernel cache entry (`op.kernels`), every composite's
decomposition and the interned places' `empty` hold pass-through wrappers (as the
profiler swaps in its timers), and only the thread whose mode is open does anything
with them. What a policy sees is therefore:

- each kernel launch of a row (a prim, or a composite with its own kernel: `linear`,
  `conv2d`, `relu` on the cpu) as `torch.ops.aten.<row>.default`, after it ran, with no
  args (kernels see backend handles, not tensors); `ctx.op_output` is the output tensor
  (made on first access);
- each composite that runs its decomposition (`mm`, `addmm`, `bmm`,
  `scaled_dot_product_attention`...) as `torch.ops.aten.<row>.default` with its tensor
  arguments and output, after the kernels it launched were asked about. Saving a
  composite saves every kernel output of its decomposition: the recomputation runs the
  decomposition's Python again (so autograd records it) but launches none of them.

A kept output is a copy (one device copy in the forward, one into the recomputation's
output buffer), so a later in-place change of the forward's tensor cannot reach it:
PyTorch's "cached ... has been mutated" error is never needed. Kernels that write into
memory that already exists (in-place ops, outputs that are views) are never kept: they
count in the order, but their policy is not asked.
"""
from __future__ import annotations

import threading
from collections import defaultdict

from .. import _dtype as D
from .. import _place
from .._run import wrap
from ..dispatch import DECOMPOSE, OPS, resolve_everywhere
from ..dispatch.loader import loaded_backends
from ..ops.aten_namespace import overload_of

_TLS = threading.local()            # .mode: the open mode of this thread, or None
_lock = threading.Lock()
_installed = [0]                    # open modes, all threads (wrappers stay while > 0)
_saved_empty: list = []             # (place, its empty before ours)

RECOMPUTE = object()
CONSUMED = object()
MISMATCH = ("This can happen if the operations in the checkpointed region are "
            "nondeterministic or depend on global state that changed between forward "
            "and backward.")


class Kept:
    """Saved kernel outputs: device copies with their (shape, dtype name, place)."""
    __slots__ = ("copies", "metas")

    def __init__(self, copies, metas):
        self.copies, self.metas = copies, metas


class Tentative(Kept):
    """Kept while the enclosing composite's policy is not known yet."""
    __slots__ = ()


def _copy_out(handles, metas):
    copies = []
    for h, (shape, dtype, place) in zip(handles, metas):
        c = place.bk.empty(shape, dtype, place.index)
        place.bk.copy_(c, h)
        copies.append(c)
    return copies


class _Mode:
    def __init__(self, storage):
        self.storage = storage          # {overload: {index: entry}}
        self.counter = defaultdict(int)
        self.pending = {}               # id(handle) -> (shape, dtype name, place)

    def __enter__(self):
        self.counter.clear()
        self.pending.clear()
        self.outer = getattr(_TLS, "mode", None)
        _install()
        _TLS.mode = self
        return self

    def __exit__(self, *exc):
        _TLS.mode = self.outer
        self.pending.clear()
        _uninstall()

    def _next(self, name):
        key = overload_of(name)
        idx = self.counter[key]
        self.counter[key] = idx + 1
        return key, idx

    def _outs(self, handles, n_out):
        pending = self.pending
        metas = [pending.pop(id(h), None) for h in handles[:n_out]]
        pending.clear()
        return metas


class PolicyRaised(BaseException):
    """Carries a policy's exception out of the kernel it was asked about (the executor
    turns an Exception there into a BackendError naming the op); the forward's mode
    raises the policy's own exception when it closes."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


class CachingMode(_Mode):
    """The forward's mode: runs every op, asks the policy, keeps what it saves."""

    def __exit__(self, kind, exc, tb):
        super().__exit__(kind, exc, tb)
        if isinstance(exc, PolicyRaised):
            raise exc.exc from None

    def __init__(self, policy_fn, storage, context_class, save_policies):
        super().__init__(storage)
        self.policy_fn = policy_fn
        self.context_class = context_class
        self.save_policies = save_policies
        self.frames = []                # per open composite: its children's (key, idx)

    def ask(self, ctx, key, *args, **kwargs):
        _TLS.mode = None                # ops the policy runs are not the region's
        try:
            policy = self.policy_fn(ctx, key, *args, **kwargs)
        except Exception as exc:        # past the executor's wrapping of kernel errors
            raise PolicyRaised(exc) from None
        finally:
            _TLS.mode = self
        if isinstance(policy, bool):
            return policy
        return policy in self.save_policies

    def kernel(self, name, fn, n_out, handles, params):
        metas = self._outs(handles, n_out)
        fn(*handles, **params)
        key, idx = self._next(name)
        if None in metas:               # wrote into memory that exists: never kept
            self.storage[key][idx] = RECOMPUTE
            return
        outs = handles[:n_out]
        copies = _copy_out(outs, metas) if self.frames else None
        ctx = self.context_class(is_recompute=False)
        ctx._outputs = (outs, metas, copies, n_out)
        if self.ask(ctx, key):
            copies = ctx._outputs[2] or _copy_out(outs, metas)
            self.storage[key][idx] = Kept(copies, metas)
        elif self.frames:
            self.storage[key][idx] = Tentative(ctx._outputs[2], metas)
            self.frames[-1].append((key, idx))
        else:
            self.storage[key][idx] = RECOMPUTE

    def decomposition(self, name, fn, inputs, params):
        self.frames.append([])
        try:
            r = fn(*inputs, **params)
        finally:
            children = self.frames.pop()
        key, idx = self._next(name)
        ctx = self.context_class(is_recompute=False, op_output=r)
        save = self.ask(ctx, key, *inputs, **params)
        self.storage[key][idx] = RECOMPUTE
        for k, i in children:
            entry = self.storage[k][i]
            if save:
                self.storage[k][i] = Kept(entry.copies, entry.metas)
            elif self.frames:
                self.frames[-1].append((k, i))      # the enclosing composite decides
            else:
                self.storage[k][i] = RECOMPUTE
        return r


class CachedMode(_Mode):
    """The recomputation's mode: what the forward kept comes back, the rest runs."""

    def _entry(self, name):
        key, idx = self._next(name)
        found = self.storage.get(key)
        if found is None:
            raise RuntimeError(f"{key} encountered during backward but not found in storage. "
                               f"{MISMATCH}")
        entry = found.get(idx)
        if entry is None:
            raise RuntimeError(f"{key} invocation index {idx} encountered during backward "
                               f"but not found in storage. {MISMATCH}")
        if entry is CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        return key, idx, found, entry

    def kernel(self, name, fn, n_out, handles, params):
        metas = self._outs(handles, n_out)
        key, idx, found, entry = self._entry(name)
        if entry is RECOMPUTE:
            return fn(*handles, **params)
        if [m and m[:2] for m in metas] != [m[:2] for m in entry.metas]:
            raise RuntimeError(f"{key} invocation index {idx}: the recomputation's outputs "
                               f"{[m and m[:2] for m in metas]} differ from the forward's "
                               f"{[m[:2] for m in entry.metas]}. {MISMATCH}")
        for out, c, (_, _, place) in zip(handles[:n_out], entry.copies, entry.metas):
            place.bk.copy_(out, c)
        found[idx] = CONSUMED
        return None

    def decomposition(self, name, fn, inputs, params):
        key, idx, found, entry = self._entry(name)
        found[idx] = CONSUMED
        return fn(*inputs, **params)


def op_output(ctx):
    """A kernel's output tensor(s) for SelectiveCheckpointContext.op_output, copied once."""
    outs, metas, copies, n_out = ctx._outputs
    if copies is None:
        copies = _copy_out(outs, metas)
        ctx._outputs = (outs, metas, copies, n_out)
    made = [wrap(c, shape, D.BY_NAME[dtype], place) for c, (shape, dtype, place)
            in zip(copies, metas)]
    return made[0] if n_out == 1 else tuple(made)


# -- the wrappers ----------------------------------------------------------------------

def _kernel_wrapper(name, fn, n_out):
    def sac_kernel(*handles, **params):
        mode = getattr(_TLS, "mode", None)
        if mode is None:
            return fn(*handles, **params)
        return mode.kernel(name, fn, n_out, handles, params)
    sac_kernel._dt_sac = fn
    return sac_kernel


def _decomp_wrapper(name, fn):
    def sac_decomposition(*inputs, **params):
        mode = getattr(_TLS, "mode", None)
        if mode is None:
            return fn(*inputs, **params)
        return mode.decomposition(name, fn, inputs, params)
    sac_decomposition._dt_sac = fn
    return sac_decomposition


def _empty_wrapper(place, real):
    def sac_empty(shape, dtype, index):
        h = real(shape, dtype, index)
        mode = getattr(_TLS, "mode", None)
        if mode is not None:
            mode.pending[id(h)] = (tuple(shape), dtype, place)
        return h
    sac_empty._dt_sac = real
    return sac_empty


_plan = {"sig": None, "kernels": [], "decomps": []}   # the wrappers, made once


def _signature():
    runtimes = tuple(rt.name for rt in loaded_backends() if rt.backend is not None)
    return (len(OPS), sum(len(op.kernels) for op in OPS.values()), runtimes)


def _plan_wrappers():
    """Resolve every op on every loaded backend (a kernel resolved later would escape)
    and make the wrappers: (kernel table, key, kernel, wrapper) and (op, its
    decomposition, wrapper)."""
    resolve_everywhere()
    kernels, decomps = [], []
    for op in OPS.values():
        for b, fn in op.kernels.items():
            if fn is not DECOMPOSE:
                inner = getattr(fn, "_dt_sac", fn)
                kernels.append([op, b, inner, _kernel_wrapper(op.name, inner, op.n_out)])
        if op.decomp is not None:
            inner = getattr(op.decomp, "_dt_sac", op.decomp)
            decomps.append([op, inner, _decomp_wrapper(op.name, inner)])
    _plan["kernels"], _plan["decomps"] = kernels, decomps
    _plan["sig"] = _signature()


def _install():
    with _lock:
        _installed[0] += 1
        if _installed[0] > 1:
            return
        if _plan["sig"] != _signature():
            _plan_wrappers()
        for entry in _plan["kernels"]:
            op, key, inner, wrapper = entry
            fn = op.kernels.get(key)
            if fn is not inner and fn is not None and fn is not DECOMPOSE:
                # replaced since (a profiler's timer, a test's counter): wrap that one
                entry[2:] = inner, wrapper = fn, _kernel_wrapper(op.name, fn, op.n_out)
            if fn is inner:
                op.kernels[key] = wrapper
        for entry in _plan["decomps"]:
            op, inner, wrapper = entry
            if op.decomp is not inner and op.decomp is not None:
                entry[1:] = inner, wrapper = op.decomp, _decomp_wrapper(op.name, op.decomp)
            op.decomp = wrapper
        for place in list(_place._places.values()):
            _saved_empty.append((place, place.empty))
            place.empty = _empty_wrapper(place, place.empty)


def _uninstall():
    with _lock:
        _installed[0] -= 1
        if _installed[0] > 0:
            return
        while _saved_empty:
            place, real = _saved_empty.pop()
            place.empty = real
        for op, key, inner, wrapper in _plan["kernels"]:
            if op.kernels.get(key) is wrapper:
                op.kernels[key] = inner
        for op, inner, wrapper in _plan["decomps"]:
            if op.decomp is wrapper:
                op.decomp = inner
