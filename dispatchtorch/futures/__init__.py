"""torch.futures: Future, collect_all, wait_all (see _future.py for how a Future of a
collective completes without a background thread)."""
from __future__ import annotations

from ._future import Future

__all__ = ["Future", "collect_all", "wait_all"]


def collect_all(futures):
    """A Future of the list of `futures`, completed when all of them are; it fails at once
    with the first failed then() callback's error, and its value() raises the first
    exception set with set_exception, in list order."""
    futures = _future_list(futures, "collect_all")
    combined = Future()
    if not futures:
        combined.set_result([])
        return combined
    left = [len(futures)]

    def drive(block):
        for f in futures:
            f._settle(block)
    combined._drive = drive
    combined._unwrap = lambda lst: ([f.value() for f in lst], lst)[1]

    def one_done(f):
        if combined._completed:
            return
        if f._error is not None:
            combined._complete(error=f._error)
            return
        left[0] -= 1
        if left[0] == 0:
            combined._complete(list(futures))
    for f in futures:
        f._on_done(one_done)
    return combined


def wait_all(futures):
    """Wait for every Future; their values, in order (raises the first error found)."""
    return [f.wait() for f in collect_all(futures).wait()]


def _future_list(futures, what):
    if not isinstance(futures, (list, tuple)) or not all(isinstance(f, Future) for f in futures):
        raise TypeError(f"{what}(): expected a list of torch.futures.Future, got "
                        f"{type(futures).__name__}"
                        + ("" if not isinstance(futures, (list, tuple)) else
                           f" of {sorted({type(f).__name__ for f in futures})}"))
    return list(futures)
