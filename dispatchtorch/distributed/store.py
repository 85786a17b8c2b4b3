"""Key-value stores as torch.distributed's: Store (the operations), HashStore (one
process, threads wait on a condition) and PrefixStore (keys under "prefix/"). Values are
bytes; `get` and `wait` block until the keys are set or the timeout passes. A store's
queues live in its dict under ("queue", name) keys, apart from the keys, as PyTorch keeps
them (a queue is seen by check/wait, not by get, num_keys or list_keys)."""
from __future__ import annotations

import datetime
import threading
import time

from .errors import DistStoreError
from .store_args import _amount, _key, _seconds, _stoll, _value, _wrap64
from .store_queues import QueueOps, has_key_or_queue

DEFAULT_STORE_TIMEOUT = datetime.timedelta(minutes=5)


class Store:
    """The operations, over `_apply(fn)` (fn(dict) run atomically) and `_pause(left)` (wait
    for a change, at most `left` seconds), which each kind of store provides."""

    _timeout_error = DistStoreError

    def __init__(self):
        self._timeout = DEFAULT_STORE_TIMEOUT

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        _seconds(timeout)
        self._timeout = timeout

    def set(self, key, value):
        k, v = _key(key, "set"), _value(value, "set")
        self._apply(lambda d: d.__setitem__(k, v))

    def get(self, key):
        k = _key(key, "get")
        self._wait([k], self._timeout, lambda: self._timeout_message([k]), queues=False)
        return self._apply(lambda d: d[k])

    def add(self, key, amount):
        k, amount = _key(key, "add"), _amount(amount, "add")

        def op(d):
            raw = d.get(k, b"")
            n = _wrap64((_stoll(raw) if raw else 0) + amount)
            d[k] = str(n).encode()
            return n
        return self._apply(op)

    def append(self, key, value):
        k, v = _key(key, "append"), _value(value, "append")
        self._apply(lambda d: d.__setitem__(k, d.get(k, b"") + v))

    def compare_set(self, key, expected_value, desired_value):
        """Set desired if the value is expected (or absent and expected empty); returns the
        value afterwards (expected itself when the key is absent and expected not empty)."""
        k = _key(key, "compare_set")
        exp, want = _value(expected_value, "compare_set"), _value(desired_value, "compare_set")

        def op(d):
            if k not in d:
                if exp == b"":
                    d[k] = want
                    return want
                return exp
            if d[k] == exp:
                d[k] = want
            return d[k]
        return self._apply(op)

    def multi_set(self, keys, values):
        ks = [_key(k, "multi_set") for k in keys]
        vs = [_value(v, "multi_set") for v in values]
        self._apply(lambda d: d.update(zip(ks, vs)))

    def multi_get(self, keys):
        ks = [_key(k, "multi_get") for k in keys]
        self._wait(ks, self._timeout, lambda: self._timeout_message(ks), queues=False)
        return self._apply(lambda d: [d[k] for k in ks])

    def check(self, keys):
        ks = [_key(k, "check") for k in keys]
        return self._apply(lambda d: all(has_key_or_queue(d, k) for k in ks))

    def wait(self, keys, timeout=None):
        ks = [_key(k, "wait") for k in keys]
        self._wait(ks, self._timeout if timeout is None else timeout, lambda: "Wait timeout")

    def delete_key(self, key):
        k = _key(key, "delete_key")
        return self._apply(lambda d: d.pop(k, None) is not None)

    def num_keys(self):
        return self._apply(lambda d: sum(isinstance(k, str) for k in d))

    def list_keys(self):
        return self._apply(lambda d: [k for k in d if isinstance(k, str)])

    def has_extended_api(self):
        return False

    def clone(self):
        raise NotImplementedError(f"clone is not implemented by {type(self).__name__}")

    def barrier(self, key, world_size, timeout=None):
        """PyTorch's Store::barrier: members count in "key/num_members"; the world_size-th
        sets "key/last_member", which every member waits for."""
        k = _key(key, "barrier")
        if not isinstance(world_size, int) or isinstance(world_size, bool):
            raise TypeError("barrier(): incompatible function arguments: world_size must be an "
                            f"int, got {type(world_size).__name__}")
        if self.add(f"{k}/num_members", 1) == world_size:
            self.set(f"{k}/last_member", "1")
        self.wait([f"{k}/last_member"], self._timeout if timeout is None else timeout)

    def queue_push(self, key, value):
        _key(key, "queue_push"), _value(value, "queue_push")
        raise NotImplementedError("queue support is not implemented.")

    def queue_pop(self, key, block=True):
        _key(key, "queue_pop")
        raise NotImplementedError("queue support is not implemented.")

    def queue_len(self, key):
        _key(key, "queue_len")
        raise NotImplementedError("queue support is not implemented.")

    def _timeout_message(self, keys):
        return "Wait timeout"

    def _wait(self, keys, timeout, message, queues=True):
        deadline = time.monotonic() + _seconds(timeout)
        present = has_key_or_queue if queues else (lambda d, k: k in d)
        while not self._apply(lambda d: all(present(d, k) for k in keys)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._timeout_error(message())
            self._pause(left)


class HashStore(QueueOps, Store):
    """A store in this process's memory (threads share it; `clone` shares it too)."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._cond = threading.Condition()

    def _apply(self, fn):
        with self._cond:
            out = fn(self._data)
            self._cond.notify_all()
            return out

    def _wait(self, keys, timeout, message, queues=True):
        present = has_key_or_queue if queues else (lambda d, k: k in d)
        self._wait_for(lambda d: all(present(d, k) for k in keys), _seconds(timeout), message)

    def _wait_for(self, ready, seconds, message=lambda: "Wait timeout"):
        """Check ready(dict) and sleep under one lock, so a change between is never missed."""
        with self._cond:
            if not self._cond.wait_for(lambda: ready(self._data), seconds):
                raise self._timeout_error(message())

    def has_extended_api(self):
        return True

    def clone(self):
        c = HashStore.__new__(HashStore)
        c._data, c._cond, c._timeout = self._data, self._cond, self._timeout
        return c


class PrefixStore(Store):
    """`store` with every key put under "prefix/" (num_keys: the whole store's count)."""

    def __init__(self, prefix, store):
        if not isinstance(prefix, str) or not isinstance(store, Store):
            raise TypeError("__init__(): incompatible constructor arguments: PrefixStore(prefix: "
                            "str, store: Store)")
        super().__init__()
        self._prefix, self.underlying_store = prefix, store
        self._timeout = store.timeout

    def _k(self, key, what):
        return f"{self._prefix}/{_key(key, what)}"

    def set_timeout(self, timeout):
        super().set_timeout(timeout)
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key, "set"), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key, "get"))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key, "add"), amount)

    def append(self, key, value):
        self.underlying_store.append(self._k(key, "append"), value)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key, "compare_set"), expected_value,
                                                 desired_value)

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._k(k, "multi_set") for k in keys], values)

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._k(k, "multi_get") for k in keys])

    def check(self, keys):
        return self.underlying_store.check([self._k(k, "check") for k in keys])

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k, "wait") for k in keys],
                                   self._timeout if timeout is None else timeout)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key, "delete_key"))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def list_keys(self):
        """The underlying store's keys under "prefix/", without it."""
        p = f"{self._prefix}/"
        return [k[len(p):] for k in self.underlying_store.list_keys() if k.startswith(p)]

    def has_extended_api(self):
        return self.underlying_store.has_extended_api()

    def clone(self):
        return PrefixStore(self._prefix, self.underlying_store.clone())

    def queue_push(self, key, value):
        self.underlying_store.queue_push(self._k(key, "queue_push"), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._k(key, "queue_pop"), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._k(key, "queue_len"))


for _c in (Store, HashStore, PrefixStore):
    _c.__module__ = "dispatchtorch.distributed"
