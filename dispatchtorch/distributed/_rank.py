"""What each rank process runs under dispatchtorch-run: torchrun's environment from
the MPI launcher's, then the training script; an uncaught exception prints the rank's
traceback and ends this process at once with exit 1, so mpiexec ends the whole job
(instead of the other ranks waiting forever in their next collective)."""
from __future__ import annotations

import os
import runpy
import sys
import traceback

from ._mpi import launcher_env


def _torchrun_env():
    rank, size, local_rank, local_size = launcher_env()
    rank = 0 if rank is None else rank
    size = 1 if size is None else size
    local_size = size if local_size is None else local_size
    local_rank = rank % local_size if local_rank is None else local_rank
    env = {"RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": local_rank,
           "LOCAL_WORLD_SIZE": local_size, "GROUP_RANK": rank // max(local_size, 1),
           "ROLE_RANK": rank, "ROLE_WORLD_SIZE": size, "ROLE_NAME": "default",
           "GROUP_WORLD_SIZE": max(size // max(local_size, 1), 1)}
    for k, v in env.items():
        os.environ[k] = str(v)
    return rank


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rank = _torchrun_env()
    mode = "script"
    if argv and argv[0] in ("--module", "--no-python"):
        mode, argv = argv[0][2:], argv[1:]
    if not argv:
        sys.stderr.write("dispatchtorch.distributed._rank: nothing to run\n")
        return 2
    if mode == "no-python":
        os.execvp(argv[0], argv)
    sys.argv = list(argv)
    try:
        if mode == "module":
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code in (None, 0):
            return 0
        if not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    except BaseException:
        text = traceback.format_exc()
        sys.stdout.flush()
        sys.stderr.write(f"[rank {rank}] failed with this traceback; ending the job:\n{text}")
        sys.stderr.flush()
        os._exit(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
