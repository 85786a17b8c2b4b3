"""torch.multiprocessing: Python's multiprocessing plus PyTorch's spawn/start_processes
(spawn.py) and the sharing-strategy calls. Tensors in shared memory
(`Tensor.share_memory_`) sent to another process (fork, spawn or forkserver children;
Process arguments, Queues, Pipes) travel as an fd of their memory, so the receiver maps
the same pages (see _shared_storage._reduce_for_child); other tensors are pickled by value."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                    ProcessRaisedException, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessExitedException", "ProcessRaisedException"]
__all__ += multiprocessing.__all__

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_descriptor"]


def set_sharing_strategy(new_strategy):
    """Recorded only: shared tensors always travel as fds (PyTorch's file_descriptor
    strategy; see the module docstring)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}; expected one of "
                             f"{_STRATEGIES}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]


def get_all_sharing_strategies():
    return set(_STRATEGIES)
