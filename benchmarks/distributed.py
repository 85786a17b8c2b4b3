"""`python -m benchmarks.distributed`: dispatchtorch.distributed's figures.

  all_reduce  4M float32 on 2 ranks: dispatchtorch's dist.all_reduce vs raw mpi4py
              Allreduce on the same numpy buffer (target: within 1.2x)
  ddp step    one training step (forward, backward with its bucketed all-reduces,
              optimizer) of the digits CNN with a per-rank batch, on N ranks, vs the
              same step in one process (no communication)

Medians over --repeats batches, raw and dispatchtorch interleaved batch by batch so
that load from other processes hits both alike. Writes OUT/distributed.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.distributed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--elements", type=int, default=4 << 20, help="all_reduce size (float32)")
    p.add_argument("--batch", type=int, default=64, help="DDP per-rank batch")
    p.add_argument("--out", default="bench-results")
    p.add_argument("--role", choices=["driver", "ranks", "single"], default="driver",
                   help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _batches(fns, number, repeats, sync):
    """{name: median seconds per call}, the fns interleaved batch by batch."""
    samples = {name: [] for name in fns}
    for fn in fns.values():
        fn()
        sync()
    for _ in range(repeats):
        for name, fn in fns.items():
            sync()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            samples[name].append((time.perf_counter() - t0) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def _step(torch, model, x, y):
    """benchmarks.models' training step (the digits CNN's optimizer, Adam)."""
    from .models import training_step
    return training_step(torch, model, torch.optim.Adam(model.parameters(), lr=1e-3), x, y)


def _inputs(torch, batch):
    g = torch.Generator().manual_seed(0)
    return torch.rand(batch, 1, 8, 8, generator=g), torch.randint(0, 10, (batch,), generator=g)


def _ranks(args):
    import numpy as np
    from mpi4py import MPI

    import dispatchtorch as torch
    import dispatchtorch.distributed as dist
    from dispatchtorch.nn.parallel import DistributedDataParallel as DDP

    from .models import digits_cnn
    dist.init_process_group()
    comm = MPI.COMM_WORLD
    buf = np.ones(args.elements, np.float32)
    t = torch.from_numpy(buf)                     # the same memory: zero-copy
    fns = {"mpi4py": lambda: comm.Allreduce(MPI.IN_PLACE, buf),
           "dispatchtorch": lambda: dist.all_reduce(t)}
    ar = _batches(fns, 10, args.repeats, comm.Barrier)
    torch.manual_seed(0)
    model = DDP(digits_cnn(torch))
    x, y = _inputs(torch, args.batch)
    ddp = _batches({"ddp": _step(torch, model, x, y)}, 5, args.repeats, comm.Barrier)
    if dist.get_rank() == 0:
        print(json.dumps({"all_reduce": ar, "ddp_step_s": ddp["ddp"],
                          "buckets": len(model.reducer.buckets)}))
    dist.destroy_process_group()


def _single(args):
    import dispatchtorch as torch

    from .models import digits_cnn
    torch.manual_seed(0)
    x, y = _inputs(torch, args.batch)
    res = _batches({"single": _step(torch, digits_cnn(torch), x, y)}, 5, args.repeats,
                   lambda: None)
    print(json.dumps({"single_step_s": res["single"]}))


def _last_json(out):
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def main(argv=None):
    args = _args(sys.argv[1:] if argv is None else argv)
    if args.role == "ranks":
        return _ranks(args)
    if args.role == "single":
        return _single(args)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    common = ["--repeats", str(args.repeats), "--elements", str(args.elements),
              "--batch", str(args.batch)]
    single = subprocess.run([sys.executable, "-m", "benchmarks.distributed", "--role", "single",
                             *common], capture_output=True, text=True, env=env, check=True)
    ranks = subprocess.run([sys.executable, "-m", "dispatchtorch.distributed.run",
                            f"--nproc-per-node={args.ranks}", "-m", "benchmarks.distributed",
                            "--role", "ranks", *common], capture_output=True, text=True,
                           env=env, check=True)
    res = {**_last_json(single.stdout), **_last_json(ranks.stdout), "ranks": args.ranks,
           "elements": args.elements, "batch_per_rank": args.batch}
    ar = res["all_reduce"]
    mb = args.elements * 4 / 2**20
    print(f"all_reduce {args.elements} float32 ({mb:.0f} MiB), {args.ranks} ranks:")
    print(f"  raw mpi4py     {ar['mpi4py'] * 1e3:8.2f} ms")
    print(f"  dispatchtorch  {ar['dispatchtorch'] * 1e3:8.2f} ms   "
          f"ratio {ar['dispatchtorch'] / ar['mpi4py']:.2f}x (target <= 1.2x)")
    print(f"digits CNN step, batch {args.batch} per rank:")
    print(f"  one process    {res['single_step_s'] * 1e3:8.2f} ms")
    print(f"  DDP {args.ranks} ranks     {res['ddp_step_s'] * 1e3:8.2f} ms   "
          f"ratio {res['ddp_step_s'] / res['single_step_s']:.2f}x ({res['buckets']} bucket(s))")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "distributed.json"), "w") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
