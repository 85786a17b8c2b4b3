"""torch.autograd.profiler: the older names of torch.profiler's recording (profile,
record_function and the event types), for programs written before torch.profiler."""
from __future__ import annotations

from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..profiler._legacy import profile  # noqa: F401
from ..profiler._profile import record_function  # noqa: F401

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]
