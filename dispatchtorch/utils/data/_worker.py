"""What runs inside a DataLoader worker process: the fetch loop, get_worker_info, and
the wrapper that carries a worker's exception (with its traceback) to the main process."""
from __future__ import annotations

import queue
import random
import sys
import traceback
from dataclasses import dataclass

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """Inside a worker: which one it is (id of num_workers), its seed and its copy of
    the dataset (to shard an IterableDataset)."""
    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """This worker's WorkerInfo, or None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, as its type and formatted traceback (picklable)."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the same exception type in the calling process, its message holding the
        worker's traceback (PyTorch's format)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError prints its argument's repr; this keeps the traceback readable."""

    def __repr__(self):
        return self


class Resume:
    """Sent to persistent workers at a new epoch: rebuild the fetcher (a fresh iterator
    of an IterableDataset); the worker answers (None, Resume)."""


@dataclass(frozen=True)
class IterableEnd:
    """A worker's IterableDataset copy is exhausted."""
    worker_id: int


def _seed_worker(seed):
    from ... import ops
    random.seed(seed)
    ops.manual_seed(seed)
    try:
        import numpy as np
        np.random.seed(seed % 2 ** 32)
    except ImportError:                   # pragma: no cover - numpy is a dependency
        pass


def worker_loop(dataset, fetch, index_queue, data_queue, done_event, seed, init_fn, worker_id,
                num_workers, iterable):
    """Fetch what index_queue asks for until it sends None; results (or an
    ExceptionWrapper) go to data_queue tagged with their task index."""
    global _worker_info
    try:
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetch(dataset)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                task = index_queue.get(timeout=1.0)
            except queue.Empty:
                if done_event.is_set():
                    return
                continue
            if task is None:
                return
            if task is Resume:
                exhausted = False
                try:
                    fetcher = fetch(dataset)
                except Exception:
                    init_error = ExceptionWrapper(where=f"in DataLoader worker process "
                                                        f"{worker_id}")
                data_queue.put((None, Resume))
                continue
            if done_event.is_set() or exhausted:
                continue
            idx, indices = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher(indices)
                except StopIteration:
                    if not iterable:
                        raise
                    data, exhausted = IterableEnd(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data
    except KeyboardInterrupt:
        pass
    finally:
        if done_event.is_set():
            data_queue.cancel_join_thread()
        data_queue.close()
