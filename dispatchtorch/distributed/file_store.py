"""FileStore: a store in a file that processes on one file system share (each operation
locks the file with flock, reads the pickled dict, and writes it back). The file is
removed once every instance opened on it has closed, as PyTorch's; its format is not
PyTorch's. No queues: PyTorch's FileStore has none (NotImplementedError)."""
from __future__ import annotations

import fcntl
import os
import pickle
import time
import weakref

from .store import Store

_REFCOUNT, _CLEANUP = "\0refcount", "\0cleanup"   # PyTorch's FileStore keeps such keys too
_LISTED = {_REFCOUNT: "efcount/", _CLEANUP: "leanup/"}   # ...and lists them so


class FileStore(Store):
    _timeout_error = RuntimeError

    def __init__(self, file_name, world_size=-1):
        if not isinstance(file_name, str) or not isinstance(world_size, int):
            raise TypeError("__init__(): incompatible constructor arguments: FileStore(file_name: "
                            "str, world_size: int = -1)")
        super().__init__()
        self.path, self._world_size = file_name, world_size
        self.add(_REFCOUNT, 1)
        # a finalizer, not __del__: it also runs at exit before modules are torn down (a
        # __del__ then could fail between flock and close and leave the file locked)
        self.close = weakref.finalize(self, _finish, file_name, world_size)

    def _apply(self, fn):
        return _apply(self.path, fn)

    def _pause(self, left):
        time.sleep(min(left, 0.01))

    def _timeout_message(self, keys):
        return (f"Timeout waiting for key: {', '.join(keys)} after "
                f"{int(self._timeout.total_seconds() * 1000)} ms")

    def list_keys(self):
        return [_LISTED.get(k, k) for k in super().list_keys()]

    def clone(self):
        """Another instance on the same file (PyTorch's: the default timeout again)."""
        return FileStore(self.path, self._world_size)

    def delete_key(self, key):
        """Remove key; True even when it was absent, as PyTorch's FileStore answers."""
        super().delete_key(key)
        return True


def _apply(path, fn):
    """fn(dict) on the file's dict, under an exclusive flock of the file."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "r+b") as f:
            raw = f.read()
            data = pickle.loads(raw) if raw else {}
            before = dict(data)
            out = fn(data)
            if data != before:
                f.seek(0)
                f.truncate()
                f.write(pickle.dumps(data))
                f.flush()
        return out
    finally:
        os.close(fd)                       # releases the lock


def _finish(path, world_size):
    """Count one instance finished; once every instance opened on the file (clones too)
    has, the file is removed, unless world_size is -1 (as PyTorch's)."""
    try:
        done = _apply(path, lambda d: _count_in(d, _CLEANUP))
        if done >= int(_apply(path, lambda d: d[_REFCOUNT])) and world_size != -1:
            os.remove(path)
    except (OSError, KeyError, ValueError):
        pass


def _count_in(d, key):
    d[key] = str(int(d.get(key, b"0")) + 1).encode()
    return int(d[key])


FileStore.__module__ = "dispatchtorch.distributed"
