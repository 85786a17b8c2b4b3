"""torch.futures.Future: a value that arrives later, with callbacks run when it does.

There is no background thread completing collectives here (MPI progresses inside MPI
calls), so a Future made by `Work.get_future()` carries a driver: `wait()` drives its
work to completion and `done()` polls it; the futures `then()` chains from it inherit
the driver of their parent, so waiting on the last one of a chain completes the chain."""
from __future__ import annotations

import logging
import threading
import traceback

_log = logging.getLogger("dispatchtorch.futures")

_TWICE = ("Attempting to mark a completed Future as complete again. Note that a Future can "
          "only be marked completed once.")


def _raise(exc):
    raise exc


def _callback_error(exc):
    """The RuntimeError PyTorch's then() stores when its callback raises."""
    frames = traceback.extract_tb(exc.__traceback__)
    at = "".join(f"  {f.filename}({f.lineno}): {f.name}\n" for f in reversed(frames))
    return RuntimeError(f"Got the following error when running the callback: "
                        f"{type(exc).__name__}: {exc}\n\nAt:\n{at}")


def _check_callable(callback, what):
    if not callable(callback):
        raise TypeError(f"{what}(): the callback must be callable, got "
                        f"{type(callback).__name__}")


class Future:
    """An empty, unset Future; `set_result` / `set_exception` complete it once."""

    def __init__(self, *, devices=None):
        self._devices = [_device_with_index(d) for d in (devices or [])]
        self._cond = threading.Condition()
        self._completed = False
        self._result = None
        self._error = None       # a failed then() callback's RuntimeError
        self._unwrap = None      # set_exception's: value() raises the stored exception
        self._callbacks = []
        self._drive = None       # drive(block): bring the producer to completion (or poll it)

    # -- completion ---------------------------------------------------------------------
    def _settle(self, block):
        if not self._completed and self._drive is not None:
            self._drive(block)
        if block:
            with self._cond:
                while not self._completed:
                    self._cond.wait()

    def _complete(self, result=None, error=None):
        with self._cond:
            if self._completed:
                raise RuntimeError(_TWICE)
            self._result, self._error, self._completed = result, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:            # in registration order, outside the lock
            cb(self)

    def _on_done(self, cb):
        """Run cb(self) when completed: now (inline) when it already is."""
        with self._cond:
            if not self._completed:
                self._callbacks.append(cb)
                return
        cb(self)

    # -- the public API -----------------------------------------------------------------
    def done(self):
        """Whether it holds a result or an exception (polls the work it waits on)."""
        self._settle(False)
        return self._completed

    def wait(self):
        """Block until completed; its value (or raise its exception)."""
        self._settle(True)
        return self.value()

    def value(self):
        """The value of a completed Future (raises its exception)."""
        if not self._completed:
            raise RuntimeError("Future.value() called before the Future completed: call "
                               "wait() first, or read it inside a then() callback")
        if self._error is not None:
            raise self._error
        if self._unwrap is not None:
            return self._unwrap(self._result)
        return self._result

    def set_result(self, result):
        """Complete it with `result` and run the callbacks (once only)."""
        self._complete(result)

    def set_exception(self, result):
        """Complete it with an exception that wait()/value() raise."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._unwrap = _raise           # before the check, as PyTorch's does
        self.set_result(result)

    def then(self, callback):
        """A new Future holding callback(self)'s return value, completed when it returns
        (or holding a RuntimeError naming what the callback raised)."""
        _check_callable(callback, "then")
        child = Future()
        child._devices = list(self._devices)
        child._drive = self._settle

        def run(fut):
            try:
                out = callback(fut)
            except Exception as e:      # noqa: BLE001  (stored in the child, as PyTorch)
                child._complete(error=_callback_error(e))
                return
            child._complete(out)
        self._on_done(run)
        return child

    def add_done_callback(self, callback):
        """Run callback(self) on completion; what it raises is logged, not propagated."""
        _check_callable(callback, "add_done_callback")

        def run(fut):
            try:
                callback(fut)
            except Exception as e:      # noqa: BLE001
                _log.error("%s", _callback_error(e))
        self._on_done(run)

    def __reduce__(self):
        raise RuntimeError("Can not pickle torch.futures.Future")

    def __repr__(self):
        return f"<dispatchtorch.futures.Future{' done' if self._completed else ''}>"


def _device_with_index(d):
    from .._device import device
    dev = device(d)
    # (dispatchtorch's device("cpu:0") drops the index PyTorch keeps: read it from the name)
    indexed = isinstance(d, int) or (isinstance(d, str) and ":" in d)
    if dev.index is None and not indexed:
        raise ValueError(f"Expected devices to have indices, got {dev}")
    return dev
