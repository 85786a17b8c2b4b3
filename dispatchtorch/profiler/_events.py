"""The profiler's results in PyTorch's shapes: FunctionEvent (one range), EventList
(its table, key_averages, chrome trace) and FunctionEventAvg (one key_averages row).
Times are in microseconds, as PyTorch's."""
from __future__ import annotations

from ._table import build_table


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent:
    """One recorded range: an op (`aten::add`) or a record_function range."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 is_user_annotation=False):
        self.trace_name = name            # the Chrome trace's (ProfilerStep#3)
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"        # the steps aggregate, as PyTorch names them
        self.id, self.name, self.key, self.thread = id, name, name, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list = []
        self.cpu_parent = None
        self.count = 1
        self.device_type = "cpu"
        self.is_async = False

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_total:.3f}us start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (name, and input shapes / stack when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.stack = None
        self.cpu_parent = None
        self.is_user_annotation = False
        self.is_async = False

    def add(self, e):
        if self.key is None:
            self.key, self.input_shapes, self.stack = e.key, e.input_shapes, e.stack
            self.cpu_parent, self.is_user_annotation = e.cpu_parent, e.is_user_annotation
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of averages) with PyTorch's summaries."""

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups: dict = {}
        for e in self:
            key = e.key
            gk = (key, str(e.input_shapes) if group_by_input_shape else None,
                  tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else None)
            avg = groups.get(gk)
            if avg is None:
                avg = groups[gk] = FunctionEventAvg()
            avg.add(e)
            avg.key = key
            if not group_by_input_shape:        # shapes show only when they split the rows
                avg.input_shapes = []
            if not group_by_stack_n:
                avg.stack = []
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def export_chrome_trace(self, path):
        from ._trace import write_chrome_trace
        write_chrome_trace(self, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph lines (`outer;...;inner value`) of the events recorded with_stack."""
        if metric not in ("self_cpu_time_total", "cpu_time_total"):
            raise ValueError(f"metric should be one of: self_cpu_time_total, cpu_time_total "
                             f"(no device times here), got {metric}")
        with open(path, "w") as f:
            for e in self:
                value = int(getattr(e, metric))
                if e.stack and value > 0:
                    f.write(";".join(s.replace(" ", "_") for s in reversed(e.stack))
                            + f" {value}\n")

    def __str__(self):
        return self.table()


def events_of(collector, t0_ns):
    """The collector's ranges as FunctionEvents (start order), linked parent / children."""
    out = EventList()
    made = {}
    for i, r in enumerate(sorted(collector.ranges, key=lambda r: r.start)):
        e = FunctionEvent(i, r.name, r.tid, (r.start - t0_ns) / 1000.0, (r.end - t0_ns) / 1000.0,
                          r.shapes, r.stack, r.kind == "user_annotation")
        made[id(r)] = e
        out.append(e)
    for r in collector.ranges:
        e = made[id(r)]
        p = made.get(id(r.parent)) if r.parent is not None else None
        if p is not None:
            e.cpu_parent = p
            p.cpu_children.append(e)
    return out
