"""Queues of a dict-backed store (HashStore): ("queue", name) -> list of values, removed
when emptied, so check/wait see a queue only while it holds a value, as in PyTorch."""
from __future__ import annotations

from .errors import QueueEmptyError
from .store_args import _key, _value

QUEUE = "queue"


def has_key_or_queue(d, k):
    return k in d or (QUEUE, k) in d


def pop_front(d, k):
    """The first value of queue k (None when empty); drops the queue when it empties."""
    q = d.get((QUEUE, k))
    if not q:
        return None
    v = q.pop(0)
    if not q:
        del d[(QUEUE, k)]
    return v


class QueueOps:
    """queue_push / queue_pop / queue_len over `_apply` and `_wait`."""

    def queue_push(self, key, value):
        k, v = _key(key, "queue_push"), _value(value, "queue_push")
        self._apply(lambda d: d.setdefault((QUEUE, k), []).append(v))

    def queue_pop(self, key, block=True):
        """The oldest value; with block, wait (the store's timeout) for one to be pushed."""
        k = _key(key, "queue_pop")
        while True:
            v = self._apply(lambda d: pop_front(d, k))
            if v is not None:
                return v
            if not block:
                raise QueueEmptyError("queue is empty")
            self._wait([k], self._timeout, lambda: self._timeout_message([k]))

    def queue_len(self, key):
        k = _key(key, "queue_len")
        return self._apply(lambda d: len(d.get((QUEUE, k), ())))
