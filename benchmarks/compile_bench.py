"""dispatchtorch.compile against eager dispatchtorch, per device and thread count.

    python -m benchmarks.compile_bench [--quick] [--devices cpu,opencl] [--threads 0,1]

Each row times the same workload eagerly and through `dispatchtorch.compile` in
alternating batches (best batch of each; a shared machine's load hits both alike)
after checking that both give the same result; the paired column is the ratio of
each eager batch to the compiled batch right after it (median [min-max]). --threads 0 keeps the default
thread pools; N runs the row in a subprocess with every native pool (BLAS, OpenMP,
PoCL's worker threads) at N. Prints a markdown table for docs/performance.md.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys

import numpy as np

from . import models
from .timer import time_batch

CHAIN_N = 4 * 1024 * 1024


def chain(torch):
    def f(x, y, z):
        return torch.exp(x * y + z) * x - y         # mul, add, exp, mul, sub
    return f


def _chain_case(torch, dev, quick):
    n = 65536 if quick else CHAIN_N
    rng = np.random.default_rng(0)
    x, y, z = (torch.tensor(rng.standard_normal(n, dtype=np.float32), device=dev)
               for _ in range(3))
    f = chain(torch)
    cf = torch.compile(f)
    return (lambda: f(x, y, z)), (lambda: cf(x, y, z)), f"5-op elementwise chain, {n} float32"


def _train_case(torch, dev, quick, which):
    rng = np.random.default_rng(0)
    if which == "mlp":
        batch = 16 if quick else 128
        build = models.mlp
        x = rng.standard_normal((batch, 512), dtype=np.float32)
        y = rng.integers(0, 10, batch)
        opt = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)   # noqa: E731
        what = f"MLP SGD step, batch {batch}"
    elif which == "cnn":
        batch = 8 if quick else 64
        build = models.digits_cnn
        x = rng.standard_normal((batch, 1, 8, 8), dtype=np.float32)
        y = rng.integers(0, 10, batch)
        opt = lambda p: torch.optim.Adam(p, lr=3e-3)   # noqa: E731
        what = f"digits CNN Adam step, batch {batch}"
    else:
        batch, block = (2, 16) if quick else (32, 64)
        build = lambda tl: models.tiny_transformer(tl, block=block)   # noqa: E731
        x = rng.integers(0, 65, (batch, block))
        y = rng.integers(0, 65, (batch, block))
        opt = lambda p: torch.optim.AdamW(p, lr=3e-3, weight_decay=0.01)   # noqa: E731
        what = f"tiny transformer AdamW step, batch {batch}x{block}"
    torch.manual_seed(0)
    m1 = build(torch).to(dev)
    m2 = copy.deepcopy(m1)
    xt, yt = torch.tensor(x, device=dev), torch.tensor(y, device=dev)
    eager = models.training_step(torch, m1, opt(m1.parameters()), xt, yt)
    compiled = models.training_step(torch, torch.compile(m2), opt(m2.parameters()), xt, yt)
    return eager, compiled, what


CASES = {"chain": _chain_case,
         "mlp": lambda t, d, q: _train_case(t, d, q, "mlp"),
         "cnn": lambda t, d, q: _train_case(t, d, q, "cnn"),
         "transformer": lambda t, d, q: _train_case(t, d, q, "transformer")}


def measure(case, dev, quick, repeats=9):
    import dispatchtorch as torch
    eager, compiled, what = CASES[case](torch, dev, quick)
    sync = torch.opencl.synchronize if dev.startswith("opencl") else (lambda: None)
    torch.manual_seed(1)
    a = eager()
    torch.manual_seed(1)
    b = compiled()                      # captures
    a, b = np.asarray(a.detach().cpu().numpy()), np.asarray(b.detach().cpu().numpy())
    if not np.allclose(a, b, rtol=1e-4, atol=1e-5):
        raise AssertionError(f"{case} on {dev}: compiled differs from eager "
                             f"(max {np.abs(a - b).max()})")
    compiled()
    sync()
    number = 1 if case != "chain" or quick else 2
    te, tc = [], []
    for _ in range(repeats):
        te.append(time_batch(eager, number, sync))
        tc.append(time_batch(compiled, number, sync))
    pairs = sorted(a / b for a, b in zip(te, tc))       # each batch against its neighbour
    return {"case": case, "what": what, "device": dev, "eager_ms": min(te) * 1e3,
            "compiled_ms": min(tc) * 1e3, "speedup": min(te) / min(tc),
            "paired_median": float(np.median(pairs)), "paired_min": pairs[0],
            "paired_max": pairs[-1]}


def _in_subprocess(case, dev, quick, threads, repeats):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT"):
        env[k] = str(threads)
    cmd = [sys.executable, "-m", "benchmarks.compile_bench", "--one", case, "--devices", dev,
           "--repeats", str(repeats)]
    if quick:
        cmd.append("--quick")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    p.add_argument("--devices", default="cpu,opencl")
    p.add_argument("--threads", default="0,1", help="0: default pools; N: every pool at N")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--repeats", type=int, default=9, help="alternating batches per row")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.devices, args.quick, args.repeats)))
        return
    rows = []
    for dev in args.devices.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            for case in args.cases.split(","):
                r = measure(case, dev, args.quick, args.repeats) if threads == 0 else \
                    _in_subprocess(case, dev, args.quick, threads, args.repeats)
                r["threads"] = threads or "default"
                rows.append(r)
                print(f"{r['device']:7} threads={r['threads']!s:7} {case:12} eager "
                      f"{r['eager_ms']:9.2f} ms  compiled {r['compiled_ms']:9.2f} ms  "
                      f"{r['speedup']:.2f}x  (paired {_spread(r)})", flush=True)
    print("\n| workload | device | threads | eager (ms) | compiled (ms) | speedup | "
          "paired: median [min-max] |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['what']} | {r['device']} | {r['threads']} | {r['eager_ms']:.2f} | "
              f"{r['compiled_ms']:.2f} | {r['speedup']:.2f}x | {_spread(r)} |")


def _spread(r):
    """The batch-by-batch ratios (eager batch i / compiled batch i, run back to back):
    their median and range say how much a row moved with the load."""
    return f"{r['paired_median']:.2f}x [{r['paired_min']:.2f}-{r['paired_max']:.2f}]"


if __name__ == "__main__":
    main()
