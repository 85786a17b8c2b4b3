"""Kernel build time on a backend that compiles its kernels on first use (OpenCL on PoCL:
~0.5 s a program): the first use of 15 ops in a process with cold caches, against a
second process that finds the on-disk caches warm.

    python -m benchmarks.kernel_build [--device opencl]

Both processes share fresh, empty cache directories (XDG_CACHE_HOME holds pyopencl's
binary cache, POCL_CACHE_DIR PoCL's), so the cold run owes nothing to earlier runs.
What each op costs once built is the harness's business (`python -m benchmarks --device
opencl -k large/,matmul/1024,tiny/add`).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

# run in a fresh interpreter: import, one upload, then the first use of each op
_PROBE = """
import sys, time, numpy as np
t0 = time.perf_counter()
import dispatchtorch as torch
dev = sys.argv[1]
x = torch.tensor(np.linspace(-1, 1, 1000, dtype=np.float32), device=dev)
t1 = time.perf_counter()
ops = [lambda: x + 1, lambda: x * x, lambda: x.exp(), lambda: x.tanh(), lambda: x.sum(),
       lambda: x.amax(), lambda: x.argmax(), lambda: (x > 0), lambda: torch.where(x > 0, x, 0.0),
       lambda: x.reshape(10, 100) @ x.reshape(100, 10), lambda: x[::2] + 1,
       lambda: x.sqrt(), lambda: x.log1p(), lambda: x.to(torch.float16), lambda: x.abs()]
for op in ops:
    op().cpu()
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {len(ops)}")
"""

RUNS = ("first run (cold caches)", "second process (warm caches)")


def measure(device="opencl"):
    """[(label, import + first upload s, first use of the ops s, number of ops)], cold then warm."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_CACHE_HOME"] = tmp
        env["POCL_CACHE_DIR"] = os.path.join(tmp, "pocl")
        runs = []
        for label in RUNS:
            out = subprocess.run([sys.executable, "-c", _PROBE, device], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            runs.append((label, float(out[0]), float(out[1]), int(out[2])))
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel_build",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="opencl", help="the device to build for (default opencl)")
    args = parser.parse_args(argv)
    runs = measure(args.device)
    print(f"{args.device}: first use of {runs[0][3]} ops (on OpenCL about 20 programs)")
    for label, start, ops, n in runs:
        print(f"  {label:30s} import+device {start:6.2f}s   first use of the ops {ops:6.2f}s "
              f"({ops / n * 1e3:.0f} ms per op)")


if __name__ == "__main__":
    main()
