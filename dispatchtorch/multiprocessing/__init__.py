"""torch.multiprocessing: Python's multiprocessing plus PyTorch's spawn/start_processes
(spawn.py) and the sharing-strategy calls. Tensors sent to another process are pickled
by value here: there is no shared-memory tensor transport (PyTorch's reductions), so a
child's in-place writes to a tensor it received are not seen by the parent."""
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
    """Recorded only (tensors are pickled by value, see the module docstring)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}; expected one of "
                             f"{_STRATEGIES}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]


def get_all_sharing_strategies():
    return set(_STRATEGIES)
