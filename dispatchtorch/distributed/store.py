"""Key-value stores as torch.distributed's: Store (the operations), HashStore (one
process, threads wait on a condition) and PrefixStore (keys under "prefix/"). Values are
bytes; `get` and `wait` block until the keys are set or the timeout passes."""
from __future__ import annotations

import datetime
import threading
import time

from .errors import DistStoreError

DEFAULT_STORE_TIMEOUT = datetime.timedelta(minutes=5)


def _key(k, what):
    if not isinstance(k, str):
        raise TypeError(f"{what}(): incompatible function arguments: key must be a str, got "
                        f"{type(k).__name__}")
    return k


def _value(v, what):
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"{what}(): incompatible function arguments: value must be str or bytes, "
                    f"got {type(v).__name__}")


def _seconds(t):
    if not isinstance(t, datetime.timedelta):
        raise TypeError(f"timeout must be a datetime.timedelta, got {type(t).__name__}")
    return t.total_seconds()


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
        self._wait([k], self._timeout, lambda: self._timeout_message([k]))
        return self._apply(lambda d: d[k])

    def add(self, key, amount):
        k = _key(key, "add")
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise TypeError(f"add(): incompatible function arguments: amount must be an int, "
                            f"got {type(amount).__name__}")

        def op(d):
            try:
                n = int(d.get(k, b"0")) + amount
            except ValueError:
                raise ValueError("stoll") from None
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
        self._wait(ks, self._timeout, lambda: self._timeout_message(ks))
        return self._apply(lambda d: [d[k] for k in ks])

    def check(self, keys):
        ks = [_key(k, "check") for k in keys]
        return self._apply(lambda d: all(k in d for k in ks))

    def wait(self, keys, timeout=None):
        ks = [_key(k, "wait") for k in keys]
        self._wait(ks, self._timeout if timeout is None else timeout, lambda: "Wait timeout")

    def delete_key(self, key):
        k = _key(key, "delete_key")
        return self._apply(lambda d: d.pop(k, None) is not None)

    def num_keys(self):
        return self._apply(len)

    def has_extended_api(self):
        return True

    def _timeout_message(self, keys):
        return "Wait timeout"

    def _wait(self, keys, timeout, message):
        deadline = time.monotonic() + _seconds(timeout)
        while not self.check(keys):
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._timeout_error(message())
            self._pause(left)


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._cond = threading.Condition()

    def _apply(self, fn):
        with self._cond:
            out = fn(self._data)
            self._cond.notify_all()
            return out

    def _pause(self, left):
        with self._cond:
            self._cond.wait(left)


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


for _c in (Store, HashStore, PrefixStore):
    _c.__module__ = "dispatchtorch.distributed"
