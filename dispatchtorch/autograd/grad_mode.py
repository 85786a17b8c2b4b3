"""Grad mode: whether ops record the graph, read on every op.

STATE is the one home of the per-thread mode state (PyTorch keeps grad mode, inference
mode and autocast per thread: one thread's `no_grad`, e.g. inside `optimizer.step`,
must not stop another thread recording). A new thread starts with the defaults below,
as in PyTorch. Other per-thread modes (autocast) add their fields to `_State.__init__`.
Process-wide settings PyTorch keeps global (default dtype, anomaly mode, RNG) are not here.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    """Each thread sees its own attributes, initialised by __init__ on first use there."""

    def __init__(self):
        self.enabled = True       # grad mode: ops record the graph
        self.inference = False    # inside inference_mode


STATE = _State()

# Inference tensors (Tensor.is_inference): the tensor-making paths mark what they make
# while this thread is in inference mode. They read INFERENCE_REGIONS (the number of
# inference_mode regions open in any thread) before the per-thread STATE, so outside
# inference mode a made tensor costs one list index. INFERENCE_MADE: whether any
# inference tensor exists yet (the autograd and in-place checks read only that before).
INFERENCE_REGIONS = [0]
INFERENCE_MADE = [False]
_regions_lock = threading.Lock()


def is_grad_enabled() -> bool:
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _Mode:
    """Base for the grad-mode switches: context manager and decorator at once."""

    _enable = True
    _inference = None

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self._enable
        if self._inference is not None:
            STATE.inference = self._inference

    def __exit__(self, *exc):
        STATE.enabled, STATE.inference = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class no_grad(_Mode):
    """Ops inside record no graph; results do not require grad."""
    _enable = False


class enable_grad(_Mode):
    """Re-enable recording inside a no_grad region."""
    _enable = True


class set_grad_enabled(_Mode):
    """Set recording on or off: as a call, a context manager or a decorator."""

    def __init__(self, mode: bool):
        self._enable = bool(mode)
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self._enable     # torch.set_grad_enabled(False) also works as a plain call

    def __enter__(self):
        STATE.enabled = self._enable     # the state before the call was saved by __init__

    def __call__(self, fn):
        STATE.enabled, STATE.inference = self._prev   # used as a decorator: undo the call
        return super().__call__(fn)

    def _args(self):
        return (self._enable,)


class inference_mode(_Mode):
    """no_grad whose tensors are inference tensors (Tensor.is_inference); mode=False
    leaves inference mode inside an enclosing one and enables grad, as PyTorch's."""

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)
        self._enable = not self._mode
        self._inference = self._mode

    def __enter__(self):
        if self._mode:
            with _regions_lock:
                INFERENCE_REGIONS[0] += 1
        super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self._mode:
            with _regions_lock:
                INFERENCE_REGIONS[0] -= 1
        return False

    def _args(self):
        return (self._mode,)
