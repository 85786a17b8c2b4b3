"""dispatchtorch-run / `python -m dispatchtorch.distributed.run`: torchrun's command line,
starting the ranks as MPI processes through mpiexec (MPI processes cannot join a job
after it started, so there is no rendezvous: one mpiexec starts every rank, on several
machines through a hostfile).

    dispatchtorch-run --nproc-per-node=2 train.py --epochs 3
    dispatchtorch-run --nnodes=2 --nproc-per-node=4 --hostfile hosts train.py   (on node 0)

Exit status: the job's (a crashing rank's, 124 for a collective timeout)."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from .watchdog import TIMEOUT_EXIT_CODE


def _parser():
    p = argparse.ArgumentParser(prog="dispatchtorch-run", allow_abbrev=False,
                                description="Start a data-parallel job: N ranks through mpiexec, "
                                            "with torchrun's flags and environment.")
    p.add_argument("--nnodes", default="1",
                   help="number of machines (an int; torchrun's MIN:MAX is not supported)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="ranks per machine: an int, 'cpu' (the CPU count), 'gpu' (the CUDA "
                        "device count) or 'auto' (gpu when there are CUDA devices, else cpu)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   help="this machine's index; node 0 starts every rank through the hostfile")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1",
                   help="exported as MASTER_ADDR (MPI itself needs no rendezvous address)")
    p.add_argument("--master-port", "--master_port", type=int, default=29500,
                   help="exported as MASTER_PORT")
    p.add_argument("--standalone", action="store_true", help="one machine (the default here)")
    p.add_argument("--hostfile", default=os.environ.get("DISPATCHTORCH_HOSTFILE"),
                   help="mpiexec's hostfile listing the machines (needed when --nnodes > 1)")
    p.add_argument("--mpiexec", default=os.environ.get("DISPATCHTORCH_MPIEXEC"),
                   help="the mpiexec to use (default: the one installed beside this Python)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0,
                   help="only 0: a failed rank ends the job")
    for flag in ("backend", "endpoint", "id"):
        p.add_argument(f"--rdzv-{flag}", f"--rdzv_{flag}", default=None,
                       help="accepted and unused (one mpiexec starts every rank)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module, like python -m")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script argument as a program, not a Python script")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def find_mpiexec(explicit=None):
    """The mpiexec to start ranks with, or None."""
    if explicit:
        return shutil.which(explicit) or (explicit if os.path.exists(explicit) else None)
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    return shutil.which("mpiexec")


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "open mpi" in (out.stdout + out.stderr).lower()


def _cuda_devices():
    try:
        from .._accelerator import DeviceModule       # torch.cuda, without the package above
        return DeviceModule("cuda").device_count()
    except Exception:
        return 0


def _count(text, what):
    if text in ("auto", "gpu"):
        n = _cuda_devices()
        if n or text == "auto":
            return n or os.cpu_count() or 1
        raise SystemExit("dispatchtorch-run: --nproc-per-node=gpu but no CUDA device is usable")
    if text == "cpu":
        return os.cpu_count() or 1
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 1:
        raise SystemExit(f"dispatchtorch-run: {what} must be a positive integer, got {text!r}")
    return n


def command(args, mpiexec, open_mpi=False):
    """The mpiexec command line that starts every rank of the job."""
    nnodes = _count(args.nnodes, "--nnodes")
    per = _count(args.nproc_per_node, "--nproc-per-node")
    cmd = [mpiexec, "-n", str(nnodes * per)]
    if open_mpi:
        cmd += ["--allow-run-as-root", "--oversubscribe"]
    if nnodes > 1:
        cmd += (["--hostfile", args.hostfile, "--map-by", f"ppr:{per}:node"] if open_mpi
                else ["-f", args.hostfile, "-ppn", str(per)])
    rank_main = [sys.executable, "-m", "dispatchtorch.distributed._rank"]
    if args.module:
        rank_main.append("--module")
    elif args.no_python:
        rank_main.append("--no-python")
    return cmd + rank_main + [args.training_script] + list(args.training_script_args)


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.max_restarts:
        raise SystemExit("dispatchtorch-run: --max-restarts > 0 is not supported: a failed "
                         "rank ends the job (MPI jobs cannot replace a rank)")
    if args.module and args.no_python:
        raise SystemExit("dispatchtorch-run: --module and --no-python are mutually exclusive")
    nnodes = _count(args.nnodes, "--nnodes")
    per = _count(args.nproc_per_node, "--nproc-per-node")
    if nnodes > 1 and not args.hostfile:
        raise SystemExit("dispatchtorch-run: --nnodes > 1 needs --hostfile (mpiexec's list of "
                         "the machines; node 0 starts every rank through it)")
    if args.node_rank:
        print(f"dispatchtorch-run: node {args.node_rank}: the ranks of every node are started by "
              f"node 0's mpiexec through the hostfile; nothing to start here.")
        return 0
    mpiexec = find_mpiexec(args.mpiexec)
    if mpiexec is None:
        raise SystemExit("dispatchtorch-run: mpiexec not found; pip install "
                         "'dispatchtorch[distributed]' (mpi4py and mpich) or pass --mpiexec")
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               LOCAL_WORLD_SIZE=str(per), WORLD_SIZE=str(nnodes * per))
    if nnodes * per > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"       # as torchrun: ranks do not fight over the cores
    cmd = command(args, mpiexec, _is_open_mpi(mpiexec))
    rc = subprocess.call(cmd, env=env)
    if rc == TIMEOUT_EXIT_CODE:
        sys.stderr.write("dispatchtorch-run: a collective timed out (see the rank's message "
                         "above); the job was ended\n")
    elif rc != 0:
        sys.stderr.write(f"dispatchtorch-run: the job failed (exit {rc}); the failing rank's "
                         f"traceback is above\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
