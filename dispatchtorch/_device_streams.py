"""`torch.cuda.Stream` / `Event` / `stream()` for any device type, on the one in-order
queue each backend device has.

A backend runs a device's kernels in the order they were queued, so every stream of a
device is that queue: work on two streams never overlaps (stricter than CUDA, never
wrong), `wait_stream` / `wait_event` have nothing to wait for, and a stream's or event's
`synchronize()` waits for the device. An event's `record()` waits for the device too
and stamps the host clock when it is done, so `elapsed_time` is the time between the
device finishing the work before one record and before the other: what CUDA's timing
events measure, at the cost of a synchronize per record."""
from __future__ import annotations

import time

_CURRENT = {}            # device type -> the Stream `with stream(s):` made current

class Stream:
    """A device's queue (every Stream of a device is the same one)."""

    def __init__(self, module, device=None, priority=0, **kwargs):
        self._module = module
        self.device_index = module._resolve_index(device)
        self.priority = priority

    @property
    def device(self):
        from ._device import device as Device
        return Device(self._module.device_type, self.device_index)

    def synchronize(self):
        self._module.synchronize(self.device_index)

    def query(self):
        """Whether all its work finished: True once synchronised (it waits to know)."""
        self.synchronize()
        return True

    def wait_stream(self, stream):
        """Nothing to wait for: both are the device's one in-order queue."""

    def wait_event(self, event):
        """Nothing to wait for: work queued after this runs after the event's work."""

    def record_event(self, event=None):
        event = Event(self._module) if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return (isinstance(other, Stream) and other._module.device_type == self._module.device_type
                and other.device_index == self.device_index)

    def __hash__(self):
        return hash((self._module.device_type, self.device_index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return (f"<torch.{self._module.device_type}.Stream device={self.device} "
                f"(the device's in-order queue)>")


class Event:
    """A point in a device's queue; `record()` waits for the device (see the module)."""

    def __init__(self, module, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError(f"torch.{module.device_type}.Event(interprocess=True): "
                                      f"events cannot be shared between processes here")
        self._module = module
        self.enable_timing = enable_timing
        self._stamp = None
        self._index = None

    def record(self, stream=None):
        index = stream.device_index if stream is not None else self._module.current_device()
        self._module.synchronize(index)
        self._index, self._stamp = index, time.perf_counter()

    def wait(self, stream=None):
        """Nothing to wait for: the queue is in order, and record() already waited."""

    def query(self):
        return True

    def synchronize(self):
        """record() already waited for the work before it."""

    def elapsed_time(self, end_event):
        """Milliseconds from this event to end_event (both recorded, with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._stamp is None or end_event._stamp is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._stamp - self._stamp) * 1000.0

    def __repr__(self):
        state = "recorded" if self._stamp is not None else "not recorded"
        return f"<torch.{self._module.device_type}.Event {state}>"


class StreamContext:
    """`with torch.cuda.stream(s):` makes s current (every stream is the device's queue,
    so only `current_stream()`'s answer changes)."""

    def __init__(self, module, stream):
        self._module, self.stream = module, stream
        self._previous = None

    def __enter__(self):
        if self.stream is not None:
            kind = self._module.device_type
            self._previous = _CURRENT.get(kind)
            _CURRENT[kind] = self.stream
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _CURRENT[self._module.device_type] = self._previous
        return False


def current_stream(module, device=None):
    s = _CURRENT.get(module.device_type)
    index = module._resolve_index(device)
    return s if s is not None and s.device_index == index else Stream(module, index)
