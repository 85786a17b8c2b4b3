"""Which CPU kernels a benchmark case spends its time in:
`python -m benchmarks.profile_kernels -k train/tiny_transformer`.

Wraps every op row's CPU kernel in a timer that accumulates per (op, operand shapes),
runs the case's callable a few times, and prints per call of the case: the wall time,
the time inside kernels (the rest is the frontend: dispatch, autograd, Python), then
the ops and the (op, shapes) by time. cProfile attributes a kernel's time to the
numpy functions it calls; this groups it by what the program asked for.
"""
from __future__ import annotations

from .case_cli import case_parser, parse_case
import collections
import time

import numpy as np


def _wrap(name, kernel, stats):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return kernel(*args, **kwargs)
        finally:
            shapes = tuple(a.shape for a in args if isinstance(a, np.ndarray))[:3]
            entry = stats[(name, shapes)]
            entry[0] += 1
            entry[1] += time.perf_counter() - start
    return timed


def profile(fn, calls, threads):
    """(wall seconds per call, {(op, shapes): [calls, seconds]}) of fn on the CPU."""
    import dispatchtorch as dt
    from dispatchtorch.dispatch import OPS
    dt.set_num_threads(threads)
    fn()                                          # builds and warms up
    stats = collections.defaultdict(lambda: [0, 0.0])
    saved = {}
    for name, op in OPS.items():
        kernels = getattr(op, "kernels", None)
        if isinstance(kernels, dict) and callable(kernels.get("cpu")):
            saved[name] = kernels["cpu"]
            kernels["cpu"] = _wrap(name, kernels["cpu"], stats)
    try:
        fn()
        stats.clear()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        wall = (time.perf_counter() - start) / calls
    finally:
        for name, kernel in saved.items():
            OPS[name].kernels["cpu"] = kernel
    return wall, stats


def main(argv=None):
    p = case_parser("profile_kernels", __doc__, calls=5, top=20)
    p.add_argument("--threads", type=int, default=1, help="the CPU pool's threads (default 1)")
    args, case, fw = parse_case(p, argv, "cpu")
    wall, stats = profile(case.build(fw, case.size), args.calls, args.threads)
    total = sum(t for _, t in stats.values()) / args.calls
    print(f"{case.name}: {wall * 1e3:.2f} ms a call, {total * 1e3:.2f} ms in CPU kernels "
          f"({sum(c for c, _ in stats.values()) // args.calls} kernel calls), "
          f"{(wall - total) * 1e3:.2f} ms elsewhere")
    by_op = collections.Counter()
    for (name, _), (_, t) in stats.items():
        by_op[name] += t / args.calls
    for name, t in by_op.most_common():
        print(f"  {name:28s} {t * 1e3:8.2f} ms")
    print("by op and operand shapes:")
    rows = sorted(stats.items(), key=lambda kv: -kv[1][1])[:args.top]
    for (name, shapes), (count, t) in rows:
        print(f"  {name:20s} {count // args.calls:4d}x {t / args.calls * 1e3:8.2f} ms  {shapes}")


if __name__ == "__main__":
    main()
