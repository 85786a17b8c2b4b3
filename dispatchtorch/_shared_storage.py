"""Tensors in shared memory sent to other processes (Tensor.share_memory_, the
multiprocessing pickler): their storages travel as fds of the memory, so the receiver maps
the same pages."""
from __future__ import annotations

import os
import weakref
# Imported here, not where they are used: a Queue pickles in its feeder thread, and a
# module that thread was still importing when the program forked stays locked in the child
# (its first get() then deadlocked on the import lock).
from multiprocessing import connection as _connection, resource_sharer as _resource_sharer  # noqa: F401
from multiprocessing.reduction import DupFd, ForkingPickler

from . import serialization


# A shared storage travels as an fd of its memory (multiprocessing's DupFd: passed at
# launch to spawn/forkserver children, through the sender's resource_sharer for Queues and
# Pipes), so the receiver maps the same pages. The fd is pickled through one _SharedFd
# object per storage, so pickle's memo sends it once per message however many tensors
# view it (spawn's launch refuses an fd passed twice). Each process keeps its shared
# storages by the memory's identity (st_dev, st_ino of the fd): tensors of one storage,
# sent together or apart, are rebuilt on one storage, and a storage sent back to its
# creator is its own.
_SHARED_STORAGES = weakref.WeakValueDictionary()      # memory key -> storage
_FDS = {}                    # memory key -> _SharedFd, dropped with the storage
_REDUCED_TYPES = set()


class _SharedFd:
    __slots__ = ("fd", "__weakref__")

    def __init__(self, fd):
        self.fd = fd

    def __reduce__(self):
        return _detach, (DupFd(self.fd),)


def _detach(dup):
    """The fd a DupFd brought to this process (an int, memoized once per message)."""
    try:
        return dup.detach()
    except (OSError, EOFError) as e:      # the sender's resource_sharer is gone
        raise RuntimeError(
            "a tensor in shared memory (share_memory_) could not be received: the process "
            "that sent it must stay alive until the receiver has taken it from the Queue or "
            f"Pipe ({type(e).__name__}: {e})") from e


def _memory_key(fd):
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def share_with_children(cls, bk, storage):
    fd = bk.shared_fd(storage)
    key = _memory_key(fd)
    _SHARED_STORAGES[key] = storage
    _FDS[key] = _SharedFd(fd)
    weakref.finalize(storage, _FDS.pop, key, None)
    register_reducer(cls)


def register_reducer(cls):
    """Pickle `cls` for other processes (multiprocessing's ForkingPickler) with shared
    storages sent as fds: done once a process has a shared tensor of that class."""
    if cls not in _REDUCED_TYPES:
        ForkingPickler.register(cls, _reduce_for_child)
        _REDUCED_TYPES.add(cls)


def adopt_shared(bk, fd, shape, dtype):
    """The storage of shared memory whose fd `fd` came from another process: the storage
    this process already has on that memory (then `fd` is closed unless it is that
    storage's own, as when two tensors of one message view it), else a new one that owns
    `fd`."""
    key = _memory_key(fd)
    storage = _SHARED_STORAGES.get(key)
    if storage is None:
        storage = bk.open_shared(fd, shape, dtype)
        from ._tensor import Tensor
        share_with_children(Tensor, bk, storage)
    elif bk.shared_fd(storage) != fd:
        os.close(fd)
    return storage


def _reduce_for_child(t):
    if not t.is_shared():
        return t.__reduce_ex__(2)
    storage = t._whole_storage()
    fd = t._place.bk.shared_fd(storage)
    handle = _FDS.get(_memory_key(fd))
    if handle is None:          # shared in a fork parent after this process was forked
        share_with_children(type(t), t._place.bk, storage)
        handle = _FDS[_memory_key(fd)]
    return (serialization._rebuild_shared,
            (handle, tuple(storage.shape), t._dtype.name, tuple(t._shape), t.stride(),
             t._offset, t._rebuilder, t._rg))
