"""The DataLoader iterator with worker processes (num_workers > 0).

The main process walks the sampler and sends each batch's indices to the workers in
turn (prefetch_factor batches per worker in flight); each worker fetches and collates
its batch and sends it back; batches are yielded in sampler order. An exception in a
worker comes back as an ExceptionWrapper and is raised here with the worker's
traceback; a worker that dies is reported instead of waited for.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import queue

from ._base_seed import draw_base_seed
from ._fetch import FetcherFactory
from ._worker import ExceptionWrapper, IterableEnd, Resume, worker_loop

_STATUS_CHECK_INTERVAL = 1.0      # seconds between checks that the workers are alive


class MultiProcessIter:
    def __init__(self, loader):
        self._loader = loader
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._base_seed = draw_base_seed(loader)
        fetch = FetcherFactory(loader._iterable, loader.collate_fn, loader._auto_collation,
                               loader.batch_size, loader.drop_last)
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._shut = False
        self._owner = os.getpid()          # a forked copy of this iterator must not act
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=worker_loop, daemon=True,
                            args=(loader.dataset, fetch, index_queue, self._data_queue,
                                  self._done_event, self._base_seed + i, loader.worker_init_fn,
                                  i, self._num_workers, loader._iterable))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(first=True)

    def _reset(self, first=False):
        loader = self._loader
        self._sampler_iter = iter(loader._index_sampler) if not loader._iterable \
            else itertools.repeat(None)
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}
        self._worker_active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        if not first:                              # persistent workers, a new epoch
            for q in self._index_queues:
                q.put(Resume)
            acks = 0
            while acks < self._num_workers:        # results of the last epoch's leftovers
                _, data = self._get()              # (an epoch left early) are dropped
                acks += data is Resume
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._next_worker)
            if self._worker_active[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._send_idx += 1

    def _get(self):
        """The next (task index, data) any worker sent; errors if they died or, with a
        timeout, took too long."""
        while True:
            try:
                return self._data_queue.get(
                    timeout=self._timeout if self._timeout > 0 else _STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if self._timeout > 0:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       f"seconds") from None
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited "
                                       f"unexpectedly") from None

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._worker_active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:          # arrived earlier
                return self._deliver(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get()
            if isinstance(data, IterableEnd):
                self._worker_active[data.worker_id] = False
                self._put_task()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._deliver(data)

    def _deliver(self, data):
        self._rcvd_idx += 1
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def __len__(self):
        return len(self._loader)

    def _shutdown(self, wait=True):
        """Stop the workers. wait=False (from __del__, which the garbage collector may run
        on any thread, even a queue's feeder thread) only signals them: they exit at
        their next poll."""
        if self._shut or os.getpid() != self._owner:
            return
        self._shut = True
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        if not wait:
            return
        for w in self._workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues:
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        try:
            self._shutdown(wait=False)
        except Exception:
            pass
