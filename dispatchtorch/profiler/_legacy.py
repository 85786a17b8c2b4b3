"""torch.autograd.profiler.profile: the older context manager (enabled=..., use_cuda=...)
over the same recording as torch.profiler.profile, its results on the object itself."""
from __future__ import annotations

from ._profile import ProfilerActivity, _check_options, _Session


class profile:
    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        acts = ([ProfilerActivity.CPU] if use_cpu else []) + (
            [ProfilerActivity.CUDA] if use_cuda or use_device not in (None, "cpu") else [])
        self._cpu = _check_options(acts, profile_memory, with_flops, False)
        self._session = _Session(record_shapes, with_stack)
        self.function_events = None

    def __enter__(self):
        if self.enabled:
            if self.function_events is not None:
                raise RuntimeError("Profiler context manager is not reentrant")
            if self._cpu:
                self._session.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            if self._cpu:
                self._session.stop()
            else:
                from ._events import events_of
                self._session.events = events_of(self._session.collector, self._session.t0)
            self.function_events = self._session.events
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def table(self, *args, **kwargs):
        return self._events().table(*args, **kwargs)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        from ._trace import write_chrome_trace
        write_chrome_trace(self._events(), path, self._session.base_ns)

    def __str__(self):
        return self.table()
