"""dispatchtorch-run end to end: torchrun's environment on every rank, a crashing rank's
traceback and exit status, a hang in a collective ended by the timeout (exit 124), and
a plain mpiexec job; plus the command lines and the messages without MPI."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import dispatchtorch.distributed as dist
from dispatchtorch.distributed import _mpi, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIEXEC = run.find_mpiexec()
needs_mpi = pytest.mark.skipif(not dist.is_available() or MPIEXEC is None,
                               reason=dist.unavailable_reason() or "mpiexec not found")


def _script(tmp_path, body):
    p = tmp_path / "job.py"
    p.write_text(textwrap.dedent(body))
    return str(p)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    return env


def _launch(args, timeout=120):
    return subprocess.run([sys.executable, "-m", "dispatchtorch.distributed.run", *args],
                          capture_output=True, text=True, timeout=timeout, env=_env())


@needs_mpi
def test_every_rank_gets_torchruns_environment(tmp_path):
    job = _script(tmp_path, """
        import os, sys
        import dispatchtorch.distributed as dist
        dist.init_process_group()
        keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                "MASTER_PORT")
        words = [dist.get_rank(), *(os.environ[k] for k in keys), *sys.argv[1:]]
        with open(os.path.join(os.path.dirname(__file__), f"rank{dist.get_rank()}"), "w") as f:
            f.write(" ".join(map(str, words)))     # a file each: ranks' stdout may interleave
        dist.destroy_process_group()
    """)
    out = _launch(["--nproc-per-node=2", "--master-port=29601", job, "--lr", "0.1"])
    assert out.returncode == 0, out.stderr
    lines = [(tmp_path / f"rank{r}").read_text().split() for r in range(2)]
    assert lines == [[str(r), str(r), str(r), "2", "2", "127.0.0.1", "29601", "--lr", "0.1"]
                     for r in range(2)]


@needs_mpi
def test_a_crashing_rank_ends_the_job_with_its_traceback(tmp_path):
    job = _script(tmp_path, """
        import datetime
        import dispatchtorch as torch, dispatchtorch.distributed as dist
        dist.init_process_group(timeout=datetime.timedelta(seconds=30))
        if dist.get_rank() == 1:
            raise ZeroDivisionError("rank one fell over")
        dist.all_reduce(torch.ones(2))      # rank 0 waits here until the job is ended
    """)
    out = _launch(["--nproc-per-node=2", job])
    assert out.returncode == 1
    assert "[rank 1] failed" in out.stderr and "ZeroDivisionError: rank one fell over" in out.stderr
    assert "dispatchtorch-run: the job failed (exit 1)" in out.stderr


@needs_mpi
def test_a_hang_in_a_collective_ends_with_a_timeout_error(tmp_path):
    job = _script(tmp_path, """
        import datetime, time
        import dispatchtorch as torch, dispatchtorch.distributed as dist
        dist.init_process_group(timeout=datetime.timedelta(seconds=1))
        if dist.get_rank() == 0:
            dist.all_reduce(torch.ones(2))  # rank 1 never joins
        else:
            time.sleep(60)
    """)
    out = _launch(["--nproc-per-node=2", job])
    assert out.returncode == dist.TIMEOUT_EXIT_CODE == 124
    assert "[rank 0] dispatchtorch.distributed: all_reduce did not complete within the " \
           "process group's timeout of 1 s" in out.stderr
    assert "a collective timed out" in out.stderr


@needs_mpi
def test_a_plain_mpiexec_job_reads_rank_and_size_from_mpi(tmp_path):
    job = _script(tmp_path, """
        import dispatchtorch as torch, dispatchtorch.distributed as dist
        dist.init_process_group(init_method="env://")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        import os
        with open(os.path.join(os.path.dirname(__file__), f"rank{dist.get_rank()}"), "w") as f:
            f.write(f"SUM {dist.get_rank()} {dist.get_world_size()} {t.item()}")
    """)
    out = subprocess.run([MPIEXEC, "-n", "3", sys.executable, job], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert out.returncode == 0, out.stderr
    assert [(tmp_path / f"rank{r}").read_text() for r in range(3)] == \
        [f"SUM {r} 3 6.0" for r in range(3)]


@needs_mpi
def test_a_crash_under_a_plain_mpiexec_ends_the_job_too(tmp_path):
    job = _script(tmp_path, """
        import datetime
        import dispatchtorch as torch, dispatchtorch.distributed as dist
        dist.init_process_group(timeout=datetime.timedelta(seconds=60))
        if dist.get_rank() == 1:
            raise ZeroDivisionError("plain boom")
        dist.all_reduce(torch.ones(2))
    """)
    out = subprocess.run([MPIEXEC, "-n", "2", sys.executable, job], capture_output=True,
                         text=True, timeout=120, env=_env())
    # at once (not after the 60 s timeout): the exception hook ended the job
    assert out.returncode == 1
    assert "ZeroDivisionError: plain boom" in out.stderr
    assert "[rank 1] uncaught ZeroDivisionError: ending the MPI job" in out.stderr


def test_command_lines_for_one_and_several_machines():
    args = run._parser().parse_args(["--nproc-per-node=4", "-m", "pkg.train", "--x", "1"])
    cmd = run.command(args, "/bin/mpiexec")
    assert cmd[:3] == ["/bin/mpiexec", "-n", "4"]
    assert cmd[3:] == [sys.executable, "-m", "dispatchtorch.distributed._rank", "--module",
                       "pkg.train", "--x", "1"]
    args = run._parser().parse_args(["--nnodes=2", "--nproc_per_node=3", "--hostfile", "hosts",
                                     "t.py"])
    assert run.command(args, "mpiexec")[:7] == ["mpiexec", "-n", "6", "-f", "hosts", "-ppn", "3"]
    assert run.command(args, "mpiexec", open_mpi=True)[3:9] == \
        ["--allow-run-as-root", "--oversubscribe", "--hostfile", "hosts", "--map-by", "ppr:3:node"]
    with pytest.raises(SystemExit, match="needs --hostfile"):
        run.main(["--nnodes=2", "t.py"])
    with pytest.raises(SystemExit, match="--max-restarts > 0 is not supported"):
        run.main(["--max-restarts=2", "t.py"])
    assert run.main(["--nnodes=2", "--node-rank=1", "--hostfile", "h", "t.py"]) == 0
    with pytest.raises(SystemExit, match="must be a positive integer, got '0'"):
        run.main(["--nproc-per-node=0", "t.py"])
    assert run._count("cpu", "--nproc-per-node") == (os.cpu_count() or 1)


def test_without_mpi4py_is_available_says_why(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mpi4py" else real(name, *a))
    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setattr(_mpi, "_REASON", None)
    assert dist.is_available() is False
    assert "mpi4py is not installed" in dist.unavailable_reason()
    assert "dispatchtorch[distributed]" in dist.unavailable_reason()
    with pytest.raises(RuntimeError, match="not available: mpi4py is not installed"):
        dist.init_process_group()


def test_calls_before_init_raise_as_pytorch():
    if dist.is_initialized():
        pytest.skip("a process group is up in this process")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    import dispatchtorch as torch
    t = torch.ones(2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(t)
    assert t.tolist() == [1.0, 1.0]


@needs_mpi
def test_world_size_that_mpi_did_not_start_is_refused():
    code = ("import dispatchtorch.distributed as d\n"
            "try:\n    d.init_process_group(world_size=2, rank=0)\n"
            "except ValueError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert "world_size=2 but this MPI job has 1 rank" in out.stdout, out.stderr
    assert "dispatchtorch-run" in out.stdout


def test_ddp_and_sampler_need_a_process_group():
    from dispatchtorch import nn
    from dispatchtorch.nn.parallel import DataParallel, DistributedDataParallel
    from dispatchtorch.utils.data import DistributedSampler
    if dist.is_initialized():
        pytest.skip("a process group is up in this process")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(range(4), num_replicas=2, rank=3)
    m = nn.Linear(2, 2)
    dp = DataParallel(m)
    import dispatchtorch as torch
    x = torch.ones(1, 2)
    assert dp(x).tolist() == m(x).tolist() and list(dp.state_dict())[0] == "module.weight"
