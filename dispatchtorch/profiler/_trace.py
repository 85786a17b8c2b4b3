"""Chrome trace JSON (chrome://tracing, Perfetto, TensorBoard's profile plugin): one
complete ("X") event per range, its input shapes and stack in args, as PyTorch writes."""
from __future__ import annotations

import gzip
import json
import os
import socket
import time


def trace_dict(events, base_ns=0, metadata=None):
    pid = os.getpid()
    tids = sorted({e.thread for e in events})
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    meta += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t,
              "args": {"name": f"thread {t}"}} for t in tids]
    out = []
    for e in events:
        args = {}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        ev = {"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
              "name": getattr(e, "trace_name", e.name), "pid": pid, "tid": e.thread, "ts": e.time_range.start,
              "dur": e.time_range.elapsed_us()}
        if args:
            ev["args"] = args
        out.append(ev)
    return {"schemaVersion": 1, **(metadata or {}), "displayTimeUnit": "ms",
            "baseTimeNanoseconds": base_ns, "traceEvents": meta + out}


def write_chrome_trace(events, path, base_ns=0, metadata=None):
    data = json.dumps(trace_dict(events, base_ns, metadata))
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(data)
    else:
        with open(path, "w") as f:
            f.write(data)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An on_trace_ready writing `<worker>.<time_ns>.pt.trace.json` into dir_name."""
    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler_fn
