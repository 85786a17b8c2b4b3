"""Kernel resolution: which function a call of an op runs on a backend.

Resolved once per (op, backend) and cached on the OpDef; nothing here runs per call
except the fallback wrapper, which exists only where a prim is missing.
"""
from __future__ import annotations

import os
import warnings

from ..backend.contract import BackendError
from .registry import DECOMPOSE, OPS
from .warn_once import WARN_ALWAYS

_MODES = ("warn", "error")
_fallback_mode = os.environ.get("DISPATCHTORCH_FALLBACK", "warn").strip().lower() or "warn"
if _fallback_mode not in _MODES:
    raise ValueError(f"DISPATCHTORCH_FALLBACK must be one of {_MODES}, got {_fallback_mode!r}")


def get_fallback_mode() -> str:
    return _fallback_mode


def set_fallback_mode(mode: str) -> None:
    """'warn' (run missing prims on the CPU, warn once) or 'error' (strict)."""
    global _fallback_mode
    if mode not in _MODES:
        raise ValueError(f"fallback mode must be one of {_MODES}, got {mode!r}")
    _fallback_mode = mode
    for op in OPS.values():
        op.kernels.clear()


_recorder = None     # set by record_kernels (tools only); None: kernels run unwrapped


def record_kernels(callback) -> None:
    """Call `callback(backend_name, op_name, handles, on_device)` before every kernel call
    of the ops resolved from now on; None stops. For tools that attribute results to
    prims (the conformance suite). Resolution is cached per (op, backend), so this
    clears the caches; without a recorder `resolve` returns the kernel itself and the
    per-call path is unchanged."""
    global _recorder
    _recorder = callback
    for op in OPS.values():
        op.kernels.clear()


def _recorded(op, rt, fn, on_device):
    name, rt_name, rec = op.name, rt.name, _recorder

    def recorded(*handles, **params):
        rec(rt_name, name, handles, on_device)
        return fn(*handles, **params)
    return recorded


def resolve_everywhere():
    """Resolve every op on every loaded backend; the backends' runtimes. Whoever swaps
    kernel tables for recorders (tracing, profiling, selective checkpointing) calls this
    first: a kernel first resolved while it records would escape its wrappers."""
    from .loader import loaded_backends
    runtimes = [rt for rt in loaded_backends() if rt.backend is not None]
    for op in OPS.values():
        for rt in runtimes:
            if rt.name not in op.kernels and (op.prim or op.decomp is not None):
                try:
                    resolve(op, rt)
                except Exception:      # noqa: BLE001  (a missing prim: its error comes at call time)
                    pass
    return runtimes


def resolve(op, rt):
    """Fill and return op.kernels[rt.name]."""
    fn = rt.kernels.get(op.name)
    if fn is None:
        if not op.prim:
            fn = DECOMPOSE
        elif rt.is_reference:
            raise BackendError(f"the reference backend '{rt.name}' has no kernel for prim '{op.name}'")
        elif _fallback_mode == "error":
            fn = _refuse(op, rt)
        else:
            from .loader import get_backend
            fn = _fallback(op, rt, get_backend("cpu"))
    if _recorder is not None and fn is not DECOMPOSE:
        fn = _recorded(op, rt, fn, op.name in rt.kernels)
    elif fn is not DECOMPOSE and fn is rt.backend.kernels.get(op.name):
        fresh = rt.backend.fresh_kernels.get(op.name)    # its allocating form, if any
        if fresh is not None:
            op.fresh[fn] = fresh
    op.kernels[rt.name] = fn
    return fn


def _refuse(op, rt):
    def refuse(*args, **params):
        raise BackendError(f"{op.name}: backend '{rt.name}' has no kernel for this prim and "
                           f"DISPATCHTORCH_FALLBACK=error forbids running it on the CPU")
    return refuse


def _fallback(op, rt, cpu):
    """Run a missing prim on the CPU: copy every operand to the host, compute, copy
    the outputs back into the device's output handles."""
    cpu_kernel = resolve(op, cpu)
    dev_b, cpu_b = rt.backend, cpu.backend
    n_out = op.n_out
    warned = []

    def fallback(*handles, **params):
        if not warned or WARN_ALWAYS.on:      # once per op and backend (torch.set_warn_always)
            warned.append(True)
            rt.fallbacks.add(op.name)
            warnings.warn(f"{op.name}: backend '{rt.name}' has no kernel for this prim; running it "
                          f"on the CPU (copy in, compute, copy out). Set DISPATCHTORCH_FALLBACK=error "
                          f"to make this an error.", RuntimeWarning, stacklevel=3)
        host = [cpu_b.from_host(dev_b.to_host(h), 0) for h in handles]
        cpu_kernel(*host, **params)
        for h, out in zip(handles[:n_out], host[:n_out]):
            dev_b.copy_(h, dev_b.from_host(cpu_b.to_host(out), dev_b.device_index(h)))
    return fallback


def kernel_error(op_name, rt_name, dtypes, exc) -> BackendError:
    """The error a user sees when a kernel raises: op, backend, dtypes and the cause."""
    names = ", ".join(d.name for d in dtypes)
    return BackendError(f"{op_name} failed on backend '{rt_name}' (dtypes: {names}): "
                        f"{type(exc).__name__}: {exc}")
