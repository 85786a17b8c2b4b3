"""dispatchtorch on `cuda` against PyTorch CUDA, in one process, on the same GPU.

    python benchmarks/gpu/compare_torch.py [--out DIR] [--quick]

Cases: a 4096x4096 float32 matmul, elementwise ops on 64M float32 elements, and
one training step of an MLP (forward, backward, SGD), each run by the same code
with `torch` bound to dispatchtorch or to PyTorch. Batches of calls are timed
between device synchronisations, alternating the two frameworks; the median
per-call time is reported with the ratio ours / PyTorch (lower is better) and the
target. Results are checked against each other before they are timed.
Exit status: 0 all within target, 1 a target missed or a result differs, 2 cannot run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

TARGET_LARGE, TARGET_STEP = 1.2, 2.0


def frameworks(cpu=False):
    import torch as pt

    import dispatchtorch as dt
    if cpu:      # this script's own smoke test, on machines without a GPU
        return [("dispatchtorch", dt, "cpu", lambda: None), ("pytorch", pt, "cpu", lambda: None)]
    import cupy
    if not pt.cuda.is_available():
        raise RuntimeError("PyTorch has no CUDA device here: nothing to compare against")
    sync_dt = cupy.cuda.Device().synchronize     # dispatchtorch queues on cupy's stream
    return [("dispatchtorch", dt, "cuda", sync_dt), ("pytorch", pt, "cuda", pt.cuda.synchronize)]


def to_device(lib, device, array):
    return lib.tensor(array, device=device)


# -- cases: each returns (setup(lib, device) -> state, step(state) -> tensor) ------------

def matmul_case(n):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))

    def setup(lib, device):
        return to_device(lib, device, a), to_device(lib, device, b)
    return setup, lambda s: s[0] @ s[1]


def elementwise_case(n, op):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    ops = {"add": lambda lib, x, y: x + y, "mul": lambda lib, x, y: x * y,
           "exp": lambda lib, x, y: lib.exp(x), "relu": lambda lib, x, y: lib.relu(x),
           "sum": lambda lib, x, y: x.sum()}

    def setup(lib, device):
        return lib, to_device(lib, device, a), to_device(lib, device, b)
    return setup, lambda s: ops[op](*s)


def train_step_case(batch, sizes):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    y = rng.standard_normal((batch, sizes[-1]), dtype=np.float32)
    ws = [(rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32)
          for i, o in zip(sizes, sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]

    def setup(lib, device):
        params = [lib.tensor(p, device=device, requires_grad=True) for p in ws + bs]
        return lib, to_device(lib, device, x), to_device(lib, device, y), params

    def step(state):
        lib, xt, yt, params = state
        n = len(params) // 2
        h = xt
        for i in range(n):
            h = h @ params[i] + params[n + i]
            if i < n - 1:
                h = lib.relu(h)
        loss = ((h - yt) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
        return loss
    return setup, step


def cases(quick):
    n_mm = 1024 if quick else 4096
    n_ew = (1 << 20) if quick else 64 * (1 << 20)
    out = [(f"matmul {n_mm}x{n_mm} f32", matmul_case(n_mm), TARGET_LARGE)]
    for op in ("add", "mul", "exp", "relu", "sum"):
        out.append((f"{op} {n_ew >> 20}M f32", elementwise_case(n_ew, op), TARGET_LARGE))
    sizes = (256, 512, 512, 10) if quick else (1024, 4096, 4096, 10)
    out.append((f"train step MLP {'-'.join(map(str, sizes))} batch {256 if quick else 1024}",
                train_step_case(256 if quick else 1024, sizes), TARGET_STEP))
    return out


# -- timing ---------------------------------------------------------------------------

def host(t):
    return np.asarray(t.detach().cpu().float().numpy() if hasattr(t, "detach") else t,
                      dtype=np.float64)


def time_batch(step, state, sync, calls):
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        step(state)
    sync()
    return (time.perf_counter() - start) / calls


def measure(setup, step, fws, repeats, min_batch_s):
    states = [setup(lib, dev) for _, lib, dev, _ in fws]
    first = [host(step(s)) for s in states]     # also the warm-up: compiles the kernels
    ref = first[1]
    err = float(np.max(np.abs(first[0] - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
    calls = []
    for (_, _, _, sync), s in zip(fws, states):
        for _ in range(2):
            step(s)
        t = time_batch(step, s, sync, 1)
        calls.append(max(1, int(min_batch_s / max(t, 1e-7))))
    times = [[], []]
    for _ in range(repeats):                     # alternate: drift hits both alike
        for i, ((_, _, _, sync), s) in enumerate(zip(fws, states)):
            times[i].append(time_batch(step, s, sync, calls[i]))
    return [statistics.median(t) for t in times], err


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="where gpu_bench.json goes")
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--min-batch", type=float, default=0.05, help="seconds per timed batch")
    p.add_argument("--cpu", action="store_true",
                   help="run both on the CPU: a smoke test of this script without a GPU")
    args = p.parse_args(argv)
    try:
        fws = frameworks(args.cpu)
    except Exception as exc:         # no torch, no cupy, no CUDA: exit 2, not a missed target
        print(f"compare_torch: cannot run: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    import torch as pt
    if args.cpu:
        gpu = "none (--cpu)"
    else:
        import cupy
        gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"cupy {cupy.__version__}; CUPY_TF32={os.environ.get('CUPY_TF32', '0')}")
    print(f"GPU {gpu}; PyTorch {pt.__version__} "
          f"(TF32 matmul {'on' if pt.backends.cuda.matmul.allow_tf32 else 'off'})")
    rows, ok = [], True
    header = f"{'case':44} {'dispatchtorch':>14} {'pytorch':>10} {'ratio':>7} {'target':>7}  rel.err"
    print(header)
    print("-" * len(header))
    for name, (setup, step), target in cases(args.quick):
        (ours, theirs), err = measure(setup, step, fws, args.repeats, args.min_batch)
        ratio = ours / theirs
        good = ratio <= target and err < 1e-3
        ok &= good
        rows.append({"case": name, "dispatchtorch_ms": ours * 1e3, "pytorch_ms": theirs * 1e3,
                     "ratio": ratio, "target": target, "rel_error": err, "ok": good})
        print(f"{name:44} {ours * 1e3:11.3f} ms {theirs * 1e3:7.3f} ms {ratio:6.2f}x "
              f"{target:6.1f}x  {err:.1e}{'' if good else '  <-- MISS'}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu_bench.json"), "w") as f:
        json.dump({"gpu": gpu, "rows": rows}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
