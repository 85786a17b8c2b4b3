"""Where the microseconds of one small op go: `python -m benchmarks.profile_ops`.

For each snippet (a 10-element add, x.sum(), a view x[2:5], x[idx], the small
graph (a*b).sum().backward(), and nn.Linear(10, 10) once nn exists) it prints the unprofiled time per call, then
cProfile's functions by own time, as microseconds and calls per snippet call.
cProfile inflates short functions by roughly the same amount each, so read the
shares, not the absolute sums. `--pyinstrument` adds a call tree per snippet.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import sys
import time


def snippets(tl, device="cpu"):
    """name -> zero-argument callable, built on the torch-like module tl."""
    x = tl.randn(10, device=device)
    y = tl.randn(10, device=device)
    idx = tl.tensor([0, 3, 7], device=device)
    a = tl.randn(10, device=device, requires_grad=True)
    b = tl.randn(10, device=device, requires_grad=True)

    def graph():
        (a * b).sum().backward()
    found = {"add": lambda: x + y, "sum": lambda: x.sum(), "view": lambda: x[2:5],
             "index": lambda: x[idx], "mul_sum_backward": graph}
    try:
        nn = importlib.import_module(tl.__name__ + ".nn")
        layer = nn.Linear(10, 10).to(device)
        batch = tl.randn(1, 10, device=device)
        found["linear"] = lambda: layer(batch)
    except (ImportError, AttributeError):
        pass                                   # no nn yet
    return found


def per_call_us(fn, calls):
    for _ in range(min(calls, 1000)):
        fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def _short(path):
    """A readable location: the path from the package root on."""
    for marker in ("dispatchtorch_cpu", "dispatchtorch", "benchmarks"):
        i = path.rfind(os.sep + marker + os.sep)
        if i >= 0:
            return path[i + 1:]
    return os.path.basename(path)


def profile_rows(fn, calls):
    """[(own µs per snippet call, cumulative µs, calls per snippet call, function)]."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    stats = pstats.Stats(prof).stats
    rows = []
    for (path, line, name), (cc, nc, tt, ct, _) in stats.items():
        if name == "<lambda>" and path.endswith("profile_ops.py"):
            continue
        where = f"{_short(path)}:{line}({name})" if line else name
        rows.append((tt / calls * 1e6, ct / calls * 1e6, nc / calls, where))
    rows.sort(reverse=True)
    return rows


def report(name, fn, calls, top, out=sys.stdout):
    us = per_call_us(fn, calls)
    rows = profile_rows(fn, calls)
    profiled = sum(r[0] for r in rows) or 1e-12       # PyTorch's C++ is invisible here
    print(f"\n== {name}: {us:.2f} µs per call unprofiled ({profiled:.2f} µs under cProfile)",
          file=out)
    print(f"   {'own µs':>7} {'share':>6} {'cum µs':>7} {'calls':>6}  function", file=out)
    for own, cum, nc, where in rows[:top]:
        print(f"   {own:7.2f} {100 * own / profiled:5.1f}% {cum:7.2f} {nc:6.1f}  {where}", file=out)
    return us, rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile_ops", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-k", dest="select", help="comma-separated snippet names")
    p.add_argument("--calls", type=int, default=20000, help="calls per snippet (default 20000)")
    p.add_argument("--top", type=int, default=18, help="functions shown per snippet")
    p.add_argument("--torch", action="store_true", help="profile PyTorch instead (for scale)")
    p.add_argument("--pyinstrument", action="store_true", help="also print pyinstrument trees")
    args = p.parse_args(argv)
    if args.torch:
        import torch as tl
    else:
        import dispatchtorch as tl
    chosen = snippets(tl)
    if args.select:
        chosen = {k: v for k, v in chosen.items() if k in args.select.split(",")}
    print(f"profiling {tl.__name__} {tl.__version__}, {args.calls} calls per snippet")
    for name, fn in chosen.items():
        report(name, fn, args.calls, args.top)
        if args.pyinstrument:
            _pyinstrument(fn, args.calls)
    return 0


def _pyinstrument(fn, calls):
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("   (pyinstrument is not installed)")
        return
    prof = Profiler(interval=0.0001)
    prof.start()
    for _ in range(calls):
        fn()
    prof.stop()
    print(prof.output_text(unicode=True, color=False, show_all=False))


if __name__ == "__main__":
    sys.exit(main())
