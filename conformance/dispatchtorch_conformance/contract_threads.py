"""The contract's `threads` check: ops issued from several Python threads at once give
the answers the same ops give one at a time.

Real backends break here in ways no single-threaded case shows: a kernel cache filled by
two threads at once, a shared scratch buffer or command queue without a lock, an
allocator that hands one block to two tensors. Data loaders with thread workers, serving
threads and `torch.compile`'s background work all call ops concurrently.

Each thread runs its own small program (elementwise, broadcast, reduction, matmul,
in-place, a view's copy) on inputs of a shape no other thread uses, so kernels for new
shapes are built while others run. The concurrent run goes first (cold caches), the
serial run of the same programs after it; each result must equal the serial one within
a few float32 ulps (a race gives garbage or another thread's values)."""
from __future__ import annotations

import sys
import threading

import numpy as np

import dispatchtorch as torch

from .case import seed_of

THREADS = 4
ROUNDS = 6
SWITCH_S = 1e-5          # the interpreter switches threads often while the check runs


def _inputs(worker):
    rng = np.random.default_rng(seed_of(f"contract/threads/{worker}"))
    rows, cols = 5 + 2 * worker, 7 + 3 * worker           # a shape of its own per thread
    return [rng.standard_normal(shape).astype(np.float32)
            for shape in ((rows, cols), (rows, cols), (cols,), (cols, rows))]


def _program(device, arrays):
    """Several op families on one thread's inputs; the results as host arrays."""
    a, b, c, d = (torch.tensor(x, device=device) for x in arrays)
    out = [(a * b + c).exp().sum(1), a @ d, torch.where(a > 0, a, b).amax(0)]
    e = a.clone()
    e.mul_(2.0).add_(c)
    out.append(e)
    out.append(b.T[1:, ::2].contiguous())
    return [np.asarray(t.cpu()) for t in out]


def _concurrent(device, inputs, rounds):
    """Each worker's results per round, or the first exception a worker raised."""
    start = threading.Barrier(len(inputs))
    got = [[] for _ in inputs]
    errors = []

    def work(w):
        try:
            start.wait()
            for _ in range(rounds):
                got[w].append(_program(device, inputs[w]))
        except Exception as exc:      # noqa: BLE001  (reported as the check's failure)
            errors.append((w, exc))
    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(len(inputs))]
    old = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_S)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    finally:
        sys.setswitchinterval(old)
    hung = [w for w, t in enumerate(threads) if t.is_alive()]
    return got, errors, hung


NAMES = ("(a * b + c).exp().sum(1)", "a @ d", "where(a > 0, a, b).amax(0)",
         "a.clone().mul_(2).add_(c)", "b.T[1:, ::2].contiguous()")


def check(target, expect, fail):
    """`expect(cond, message)` / `fail(message)` are the contract's."""
    if "float32" not in target.dtypes:
        return "the device does not claim float32"
    inputs = [_inputs(w) for w in range(THREADS)]
    got, errors, hung = _concurrent(target.device, inputs, ROUNDS)
    expect(not hung, f"threads {hung} of {THREADS} did not finish within 300 s (a deadlock?)")
    if errors:
        w, exc = errors[0]
        fail(f"thread {w} of {THREADS} raised {type(exc).__name__}: {exc}")
    for w in range(THREADS):
        serial = _program(target.device, inputs[w])
        for r, results in enumerate(got[w]):
            for name, x, want in zip(NAMES, results, serial):
                expect(x.shape == want.shape,
                       f"thread {w} round {r}: {name} has shape {list(x.shape)} run "
                       f"concurrently, {list(want.shape)} alone")
                scale = np.maximum(np.abs(want), 1.0)
                bad = ~(np.abs(x - want) <= 1e-5 * scale)
                expect(not bad.any(),
                       f"thread {w} round {r}: {name} differs at {int(bad.sum())} of "
                       f"{bad.size} elements from the same program run alone (max "
                       f"difference {float(np.nanmax(np.abs(x - want)))})")
    target.rt.backend.synchronize(target.index)
    return None
