"""dispatchtorch.distributed: torch.distributed on MPI (mpi4py), for any backend through
host buffers, or a backend's own collectives engine (NCCL with the CUDA package).

Ranks are MPI processes started by `dispatchtorch-run` (or a plain `mpiexec`); see
docs/distributed.md. Nothing here imports mpi4py until init_process_group runs."""
from __future__ import annotations

from ._mpi import unavailable_reason as _unavailable_reason
from .batch_p2p import P2POp, batch_isend_irecv
from .coalesced import all_gather_coalesced, all_reduce_coalesced
from .collectives import (all_gather, all_gather_into_tensor, all_reduce, all_to_all,
                          all_to_all_single, barrier, broadcast, gather, irecv, isend,
                          monitored_barrier, recv, reduce, reduce_scatter,
                          reduce_scatter_tensor, scatter, send)
from .debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from .device_mesh import DeviceMesh, init_device_mesh
from .errors import (DistBackendError, DistError, DistNetworkError, DistStoreError,
                     QueueEmptyError)
from .file_store import FileStore
from .grad_bucket import BuiltinCommHookType, GradBucket
from .group import (Backend, GroupMember, ProcessGroup, destroy_process_group, get_backend,
                    get_global_rank, get_group_rank, get_process_group_ranks, get_rank,
                    get_world_size, group, init_process_group, is_initialized, new_group)
from .info import (default_pg_timeout, get_default_backend_for_device, get_node_local_rank,
                   get_pg_count, is_backend_available)
from .objects import (all_gather_object, broadcast_object_list, gather_object,
                      scatter_object_list)
from .objects_p2p import recv_object_list, send_object_list
from .reduce_op import ReduceOp
from .store import HashStore, PrefixStore, Store
from .tcp_store import TCPStore
from .subgroups import new_subgroups, new_subgroups_by_enumeration
from .watchdog import TIMEOUT_EXIT_CODE
from .work import Work


def is_available():
    """Whether the MPI engine can run (mpi4py importable); `unavailable_reason()` says why not."""
    return _unavailable_reason() is None


def unavailable_reason():
    """None when available, else why not and how to install it."""
    return _unavailable_reason()


def is_mpi_available():
    return is_available()


def is_nccl_available():
    """Whether the CUDA backend package offers its NCCL engine here."""
    try:
        from ..dispatch import get_backend as _get
        bk = _get("cuda").backend
    except Exception:
        return False
    return "nccl" in tuple(getattr(bk, "collectives_backends", ()) or ())


def is_gloo_available():
    """gloo is PyTorch's CPU engine; here the MPI engine serves backend='gloo'."""
    return is_available()


def is_torchelastic_launched():
    import os
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


__all__ = [
    "BuiltinCommHookType", "GradBucket", "DeviceMesh", "init_device_mesh", "FileStore",
    "HashStore", "PrefixStore", "Store", "TCPStore",
    "DebugLevel", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "P2POp", "QueueEmptyError", "all_gather_coalesced", "all_reduce_coalesced",
    "batch_isend_irecv", "default_pg_timeout", "get_debug_level",
    "get_default_backend_for_device", "get_node_local_rank", "get_pg_count",
    "is_backend_available", "new_subgroups", "new_subgroups_by_enumeration",
    "recv_object_list", "send_object_list", "set_debug_level", "set_debug_level_from_env",
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "TIMEOUT_EXIT_CODE", "Work",
    "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend",
    "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send", "unavailable_reason",
]
