"""torch.profiler.profile and record_function over the collector (_collector.py)."""
from __future__ import annotations

import contextlib
import enum
import time
import warnings
from functools import partial

from . import _collector as C
from ._events import events_of
from ._schedule import ProfilerAction, default_schedule


class ProfilerActivity(enum.Enum):
    """What a profile records. Only CPU is recordable: no backend here reports device
    timings (a device kernel's launch shows as its op's CPU range)."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    """False: the recording here is the dispatcher's own, not Kineto."""
    return False


class record_function(contextlib.ContextDecorator):
    """A named range around a block (or a decorated function) in the active profile;
    nothing when no profile records."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = []           # (collector, range): a decorated function may recurse

    def __enter__(self):
        c = C.ACTIVE[0]
        self._open.append((c, c.begin(self.name, C.USER)) if c is not None else None)
        return self

    def __exit__(self, *exc):
        opened = self._open.pop() if self._open else None
        if opened is not None:
            opened[0].end(opened[1])
        return False


class _Session:
    """One recording's collector and the events it left."""

    def __init__(self, record_shapes, with_stack):
        self.collector = C.Collector(record_shapes, with_stack)
        self.t0 = time.perf_counter_ns()
        self.base_ns = time.time_ns()
        self.events = None

    def start(self):
        self.collector.activate()

    def stop(self):
        self.collector.deactivate()
        self.events = events_of(self.collector, self.t0)


def _check_options(activities, profile_memory, with_flops, use_cuda):
    if profile_memory:
        raise NotImplementedError("profile(profile_memory=True) is not supported: no backend "
                                  "reports allocations to the profiler")
    if with_flops:
        raise NotImplementedError("profile(with_flops=True) is not supported: no op declares "
                                  "its FLOP count")
    wanted = set(activities) if activities is not None else {ProfilerActivity.CPU}
    if use_cuda:
        wanted.add(ProfilerActivity.CUDA)
    other = sorted(a.name for a in wanted if a is not ProfilerActivity.CPU)
    if other:
        warnings.warn(f"profiler: activities {other} are not recorded: no backend here reports "
                      "device timings (kernel launches show as CPU ranges)", stacklevel=3)
    return ProfilerActivity.CPU in wanted


class profile:
    """torch.profiler.profile: records the ops (`aten::<op>`) and record_function ranges
    run between start and stop, per the schedule's steps; on_trace_ready(prof) is called
    when an active cycle ends (or at stop without a schedule)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        self._cpu = _check_options(activities, profile_memory, with_flops, use_cuda)
        self.record_shapes, self.with_stack = record_shapes, with_stack
        self.schedule = schedule or default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self.schedule(self.step_num)
        self._session = None      # being prepared / recorded
        self._done = None         # the last stopped one
        self._metadata = {}       # add_metadata's, written into the Chrome trace
        A = ProfilerAction
        start, stop, prep, ready = (self.start_trace, self.stop_trace, self.prepare_trace,
                                    self._trace_ready)
        self._actions = {
            (A.NONE, A.WARMUP): [prep], (A.NONE, A.RECORD): [prep, start],
            (A.NONE, A.RECORD_AND_SAVE): [prep, start],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed "
                                         "by NONE"), start, stop],
            (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed "
                                         "by NONE"), stop],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD "
                                           "followed by WARMUP"), stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prep],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prep, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prep, start],
            (A.WARMUP, None): [start, stop], (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    # -- the trace's life -------------------------------------------------------------
    def prepare_trace(self):
        self._session = _Session(self.record_shapes, self.with_stack)

    def start_trace(self):
        if self._session is None:
            self.prepare_trace()
        if self._cpu:
            self._session.start()

    def stop_trace(self):
        s = self._session
        if s is None:
            return
        if self._cpu:
            s.stop()
        else:
            s.events = events_of(s.collector, s.t0)
        self._done, self._session = s, None

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit(self, prev, cur):
        for action in self._actions.get((prev, cur), ()):
            action()

    # -- the user's side ----------------------------------------------------------------
    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self):
        """The next step begins: record, or not, as the schedule says."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- results ----------------------------------------------------------------------
    def events(self):
        if self._done is None:
            raise AssertionError("the profiler has no results: no trace has been recorded "
                                 "and stopped yet")
        return self._done.events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path, use_python_export=False):
        from ._trace import write_chrome_trace
        write_chrome_trace(self.events(), path, self._done.base_ns, self._metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self.events().export_stacks(path, metric)

    def add_metadata(self, key, value):
        """A string entry at the Chrome trace's top level."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value):
        """A JSON entry (given as its text) at the Chrome trace's top level."""
        import json
        self._metadata[key] = json.loads(value)
