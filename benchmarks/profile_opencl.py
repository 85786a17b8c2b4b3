"""Where a benchmark case's time goes on OpenCL:
`python -m benchmarks.profile_opencl -k train/mlp`.

Runs the case on opencl:0 with a profiling queue and prints per call: the wall time,
each thread's CPU time (the host thread, PoCL's workers), the launches and copies,
and the kernels by device time (each launch's event, grouped by kernel and grid).
PoCL's workers share the cores with the host thread, so their CPU time is the work
and the wall time depends on what else runs.
"""
from __future__ import annotations

from .case_cli import case_parser, parse_case
import collections
import os
import time


def _thread_cpu():
    """{thread id: seconds on a CPU} of this process (Linux; empty elsewhere)."""
    out = {}
    try:
        for t in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{t}/schedstat") as f:
                out[t] = int(f.read().split()[0]) * 1e-9
    except OSError:
        pass
    return out


def profile(build, calls, index=0, gaps=None):
    """(wall s, {thread: cpu s}, {(kernel, grid): [launches, device s]}, copies) per call
    of build()'s callable on opencl:<index>, whose queue is swapped for a profiling one
    (same context, so every buffer stays valid) while it runs. A dict `gaps` receives
    {(kernel, grid): device idle s per call just before it}: where the device waited
    for the host (a host read, the host's own work between launches)."""
    import pyopencl as cl
    from dispatchtorch.dispatch import get_backend
    from dispatchtorch_opencl.device import Device

    dev = get_backend("opencl").backend.device(index)
    events, copies = [], collections.Counter()
    launch, copy, fill = Device.launch, cl.enqueue_copy, cl.enqueue_fill_buffer

    def timed_launch(self, kernel, gsize, lsize, args, what):
        ev = launch(self, kernel, gsize, lsize, args, what)      # (it records buffer writes)
        if getattr(self._aside, "wait", None) is None:            # (not on the side queue,
            events.append(((what, tuple(gsize)), ev))             # which does not profile)
        return ev

    def counted(name, real):
        def call(*a, **k):
            copies[name + (" (blocking)" if k.get("is_blocking") else "")] += 1
            return real(*a, **k)
        return call
    dev.synchronize()
    saved = dev._queue
    dev._queue = cl.CommandQueue(dev.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    Device.launch = timed_launch
    cl.enqueue_copy, cl.enqueue_fill_buffer = counted("copy", copy), counted("fill", fill)
    try:
        fn = build()
        fn()
        fn()
        dev.synchronize()
        events.clear()
        copies.clear()
        c0, w0 = _thread_cpu(), time.perf_counter()
        for _ in range(calls):
            fn()
        dev.synchronize()
        wall = (time.perf_counter() - w0) / calls
        c1 = _thread_cpu()
    finally:
        dev.synchronize()
        dev._queue = saved
        Device.launch = launch
        cl.enqueue_copy, cl.enqueue_fill_buffer = copy, fill
    cpu = {t: (c1[t] - c0.get(t, 0.0)) / calls for t in c1}
    if gaps is not None:
        for (_, prev), (key, e) in zip(events, events[1:]):
            idle = (e.profile.start - prev.profile.end) * 1e-9
            if idle > 0:
                gaps[key] = gaps.get(key, 0.0) + idle / calls
    stats = collections.defaultdict(lambda: [0, 0.0])
    for key, e in events:
        s = stats[key]
        s[0] += 1
        s[1] += (e.profile.end - e.profile.start) * 1e-9 / calls
    return wall, cpu, dict(stats), {k: v / calls for k, v in copies.items()}


def main(argv=None):
    p = case_parser("profile_opencl", __doc__, calls=20, top=15)
    args, case, fw = parse_case(p, argv, "opencl:0")
    idle = {}
    wall, cpu, stats, copies = profile(lambda: case.build(fw, case.size), args.calls, gaps=idle)
    me = str(os.getpid())
    others = sorted((v for t, v in cpu.items() if t != me and v > 1e-5), reverse=True)
    launches = sum(c for c, _ in stats.values()) / args.calls
    busy = sum(t for _, t in stats.values())
    print(f"{case.name} on opencl:0: {wall * 1e3:.2f} ms a call; host thread "
          f"{cpu.get(me, 0) * 1e3:.2f} ms CPU, other threads "
          f"{', '.join(f'{v * 1e3:.2f}' for v in others)} ms; {launches:.0f} launches, "
          f"{busy * 1e3:.2f} ms of kernels; copies/fills {dict(copies)}")
    for (what, grid), (count, t) in sorted(stats.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"  {t * 1e3:8.3f} ms {count / args.calls:5.1f}x  {what}  grid {grid}")
    print(f"device idle between kernels: {sum(idle.values()) * 1e3:.2f} ms a call; the largest "
          f"gaps, by the kernel after them:")
    for (what, grid), t in sorted(idle.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  {t * 1e3:8.3f} ms  before {what}  grid {grid}")


if __name__ == "__main__":
    main()
