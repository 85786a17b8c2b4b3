"""Small queries of torch.distributed: how many groups exist, the node-local rank, which
backends are available and which one a device type uses by default."""
from __future__ import annotations

import os

from .group import DEFAULT_TIMEOUT, STATE

default_pg_timeout = DEFAULT_TIMEOUT
# PyTorch's Backend.default_device_backend_map: cpu -> gloo (served here by MPI), cuda -> nccl
_DEFAULT_BACKEND = {"cpu": "gloo", "cuda": "nccl"}


def get_pg_count():
    """Return the number of process groups."""
    return STATE.pg_count


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the environment (the launcher sets it), else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def _single(name):
    from . import is_gloo_available, is_mpi_available, is_nccl_available
    found = {"gloo": is_gloo_available, "mpi": is_mpi_available,
             "nccl": is_nccl_available}.get(str(name).lower())
    return bool(found()) if found is not None else False


def is_backend_available(backend):
    """Whether `backend` ("gloo", "mpi", "nccl", or "cpu:gloo,cuda:nccl") can run here."""
    b = backend.lower()
    if ":" in b:
        return all(_single(part.partition(":")[2].strip()) for part in b.split(","))
    return _single(b)


def get_default_backend_for_device(device):
    """The backend PyTorch uses by default for a device type (cpu: gloo, cuda: nccl)."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    kind = kind.split(":")[0]
    backend = _DEFAULT_BACKEND.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend
