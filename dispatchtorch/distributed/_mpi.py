"""mpi4py, imported on first use: the optional `dispatchtorch[distributed]` extra.

Importing mpi4py initialises MPI (a singleton world of size 1 outside mpiexec), so
nothing here runs at `import dispatchtorch.distributed`."""
from __future__ import annotations

import os

_MPI = None
_REASON = None

INSTALL_HINT = "pip install 'dispatchtorch[distributed]' (mpi4py and mpich)"


def unavailable_reason():
    """None when mpi4py imports, else why not (checked without initialising MPI)."""
    global _REASON
    if _MPI is not None:
        return None
    if _REASON is None:
        import importlib.util
        try:
            found = importlib.util.find_spec("mpi4py") is not None
        except (ImportError, ValueError):
            found = False
        _REASON = "" if found else f"mpi4py is not installed; {INSTALL_HINT}"
    return _REASON or None


def mpi():
    """The mpi4py.MPI module (initialising MPI), or RuntimeError saying why not."""
    global _MPI, _REASON
    if _MPI is None:
        why = unavailable_reason()
        if why:
            raise RuntimeError(f"dispatchtorch.distributed is not available: {why}")
        try:
            from mpi4py import MPI
        except Exception as exc:  # a broken MPI library: report it, never crash the import
            _REASON = f"mpi4py failed to import ({type(exc).__name__}: {exc}); {INSTALL_HINT}"
            raise RuntimeError(f"dispatchtorch.distributed is not available: {_REASON}") from exc
        _MPI = MPI
    return _MPI


# rank and size as the MPI launchers publish them, read without initialising MPI
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK")
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")


def _first(names):
    for n in names:
        v = os.environ.get(n)
        if v is not None and v.strip().lstrip("-").isdigit():
            return int(v)
    return None


def launcher_env():
    """(rank, world_size, local_rank, local_world_size) from an MPI launcher's
    environment, entries None where it says nothing."""
    return (_first(_RANK_VARS), _first(_SIZE_VARS), _first(_LOCAL_RANK_VARS),
            _first(_LOCAL_SIZE_VARS))
