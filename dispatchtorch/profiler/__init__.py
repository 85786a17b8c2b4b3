"""torch.profiler on the dispatcher: which ops ran, how often, for how long (host
time), nested under record_function ranges, per schedule step; tables and Chrome
traces in PyTorch's formats. Costs nothing while no profile records (see _collector)."""
from __future__ import annotations

from ._profile import (ProfilerActivity, kineto_available, profile, record_function,
                       supported_activities)
from ._schedule import ProfilerAction, schedule
from ._trace import tensorboard_trace_handler

__all__ = ["ProfilerAction", "ProfilerActivity", "kineto_available", "profile",
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]
