"""The text table of EventList.table, laid out as PyTorch's (torch.autograd.profiler_util
_build_table, CPU columns): Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
avg, # of Calls, then Input Shapes and Source Location when recorded."""
from __future__ import annotations


def format_time(us, unit=None):
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_share(us, total):
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


_ZERO = ("cuda", "device", "xpu", "mtia", "privateuse1", "memory", "flops")


def _sort_key(sort_by):
    """The CPU keys sort by their times; the device and memory keys (PyTorch's zeros on a
    host-only profile) keep the order."""
    attr = {"cpu_time_avg": "cpu_time", "self_cpu_time": "self_cpu_time_total"}.get(sort_by,
                                                                                 sort_by)
    if attr in ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count"):
        return lambda e: getattr(e, attr)
    if any(z in attr for z in _ZERO):
        return lambda e: 0
    raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")


def build_table(events, sort_by=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, header=None,
                top_level_events_only=False, time_unit=None):
    if len(events) == 0:
        return ""
    events = list(events)
    if sort_by is not None:
        events.sort(key=_sort_key(sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_w] + [12] * 6
    align = [">"] * 7
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
        align.append(">")
    if has_stack:
        src_w = max(max(len(s) for e in events for s in (e.stack or [""])) + 4, 4)
        src_w = min(src_w, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_w)
        align.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(align, widths))
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, format_share(e.self_cpu_time_total, total),
               format_time(e.self_cpu_time_total, time_unit),
               format_share(e.cpu_time_total, total), format_time(e.cpu_time_total, time_unit),
               format_time(e.cpu_time, time_unit), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if has_stack:
            src = e.stack[0] if e.stack else ""
            if len(src) > src_w:
                src = "..." + src[len(src) - src_w + 3:]
            row.append(src)
        lines.append(row_format.format(*row))
        if has_stack:
            for s in (e.stack or [])[1:5]:
                lines.append(row_format.format(*([""] * (len(row) - 1)), s[:src_w]))
    lines.append(sep)
    lines.append(f"Self CPU time total: {format_time(total, time_unit)}")
    return "\n".join(lines) + "\n"
