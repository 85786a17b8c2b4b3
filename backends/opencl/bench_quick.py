"""Quick OpenCL figures, each as a ratio against numpy in the same run (the machine may
be shared: every figure is the median of repeats).

    python backends/opencl/bench_quick.py [--repeats N] [--compile]

--compile also measures kernel build time: a cold build (a fresh cache directory)
against a second process that finds the on-disk caches warm.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def median_time(fn, sync, repeats):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_ops(repeats):
    import dispatchtorch as torch
    from dispatchtorch.dispatch import get_backend
    dev = get_backend("opencl").backend.device(0)
    sync = dev.synchronize
    rng = np.random.default_rng(0)
    rows = []

    n = 4 * 2**20
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = torch.tensor(a, device="opencl"), torch.tensor(b, device="opencl")
    rows.append(("add, 4M float32", median_time(lambda: a + b, lambda: None, repeats),
                 median_time(lambda: x + y, sync, repeats)))
    rows.append(("exp, 4M float32", median_time(lambda: np.exp(a), lambda: None, repeats),
                 median_time(lambda: x.exp(), sync, repeats)))
    rows.append(("sum, 4M float32", median_time(lambda: a.sum(), lambda: None, repeats),
                 median_time(lambda: x.sum(), sync, repeats)))

    m = 1024
    am, bm = rng.standard_normal((m, m)).astype(np.float32), rng.standard_normal((m, m)).astype(np.float32)
    xm, ym = torch.tensor(am, device="opencl"), torch.tensor(bm, device="opencl")
    rows.append(("matmul 1024x1024 float32", median_time(lambda: am @ bm, lambda: None, repeats),
                 median_time(lambda: xm @ ym, sync, repeats)))

    s = np.ones(16, np.float32)
    xs = torch.tensor(s, device="opencl")
    rows.append(("add, 16 elements (per-op overhead)", median_time(lambda: s + s, lambda: None, repeats * 20),
                 median_time(lambda: xs + xs, sync, repeats * 20)))
    print(f"device: opencl:0 {dev.name} ({dev.platform.name.strip()}), {dev.compute_units} compute units")
    print(f"{'':38s}{'numpy':>11s}{'opencl':>11s}{'numpy/opencl':>14s}")
    for name, tn, to in rows:
        print(f"{name:38s}{tn * 1e3:9.3f}ms{to * 1e3:9.3f}ms{tn / to:13.2f}x")


_COMPILE_PROBE = """
import time, numpy as np
t0 = time.perf_counter()
import dispatchtorch as torch
x = torch.tensor(np.linspace(-1, 1, 1000, dtype=np.float32), device="opencl")
t1 = time.perf_counter()
ops = [lambda: x + 1, lambda: x * x, lambda: x.exp(), lambda: x.tanh(), lambda: x.sum(),
       lambda: x.amax(), lambda: x.argmax(), lambda: (x > 0), lambda: torch.where(x > 0, x, 0.0),
       lambda: x.reshape(10, 100) @ x.reshape(100, 10), lambda: x.t() if x.dim() == 2 else x[::2] + 1,
       lambda: x.sqrt(), lambda: x.log1p(), lambda: x.to(torch.float16), lambda: x.abs()]
for op in ops:
    op().cpu()
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {len(ops)}")
"""


def bench_compile():
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_CACHE_HOME"] = tmp            # pyopencl's binary cache
        env["POCL_CACHE_DIR"] = os.path.join(tmp, "pocl")
        runs = []
        for label in ("first run (cold caches)", "second process (warm caches)"):
            out = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            runs.append((label, float(out[0]), float(out[1]), int(out[2])))
    print(f"kernel builds: {runs[0][3]} ops' kernels (about 20 programs)")
    for label, start, ops, n in runs:
        print(f"  {label:30s} import+device {start:6.2f}s   first use of the ops {ops:6.2f}s "
              f"({ops / n * 1e3:.0f} ms per op)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--compile", action="store_true", help="also time cold vs warm kernel builds")
    args = parser.parse_args(argv)
    bench_ops(args.repeats)
    if args.compile:
        bench_compile()


if __name__ == "__main__":
    main()
