"""Grad mode is per thread (as PyTorch): threads that train, or sit in no_grad, beside
each other get exactly the results each gets alone."""
import threading

import numpy as np

import dispatchtorch as torch
from dispatchtorch import nn


def _train(seed, steps=40, barrier=None):
    """A small MLP trained with SGD on fixed data; returns the final parameters."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for p in model.parameters():       # fixed values: the global RNG is shared
            p.copy_(torch.tensor(rng.standard_normal(p.shape).astype(np.float32)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.tensor(rng.standard_normal((16, 4)).astype(np.float32))
    y = torch.tensor(rng.standard_normal((16, 1)).astype(np.float32))
    if barrier is not None:
        barrier.wait()
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()                          # enters no_grad in this thread only
    return [p.detach().numpy().copy() for p in model.parameters()]


def _in_threads(*fns):
    results, errors = [None] * len(fns), []

    def run(i, fn):
        try:
            results[i] = fn()
        except BaseException as exc:        # reported in the main thread
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _same(a, b):
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)


def test_two_threads_training_two_models():
    alone = [_train(1), _train(2)]
    barrier = threading.Barrier(2)
    both = _in_threads(lambda: _train(1, barrier=barrier), lambda: _train(2, barrier=barrier))
    _same(alone[0], both[0])
    _same(alone[1], both[1])


def test_no_grad_thread_beside_a_training_thread():
    alone = _train(3)
    stop, toggling = threading.Event(), threading.Event()
    seen = []

    def toggler():
        n = 0
        while not stop.is_set():
            with torch.no_grad():
                seen.append(torch.is_grad_enabled())
                n += 1
                toggling.set()
        return n

    def trainer():
        try:
            assert toggling.wait(30), "the no_grad thread never started"   # so they overlap
            return _train(3)
        finally:
            stop.set()
    trained, toggles = _in_threads(trainer, toggler)
    _same(alone, trained)
    assert toggles > 0 and not any(seen)


def test_every_op_records_while_another_thread_is_in_no_grad():
    """The issue's count: 20,000 ops beside a thread looping `with no_grad(): pass`."""
    x = torch.ones(2, requires_grad=True)
    stop = threading.Event()

    def toggler():
        while not stop.is_set():
            with torch.no_grad():
                pass

    def recorder():
        try:
            return sum(not (x * 2).requires_grad for _ in range(20000))
        finally:
            stop.set()
    missed, _ = _in_threads(recorder, toggler)
    assert missed == 0


def test_new_thread_starts_with_grad_enabled():
    """As PyTorch: the mode is not inherited; each thread starts with the default."""
    with torch.no_grad():
        inner = _in_threads(torch.is_grad_enabled, torch.is_inference_mode_enabled)
        assert not torch.is_grad_enabled()
    assert inner == [True, False]
    torch.set_grad_enabled(False)
    try:
        assert _in_threads(torch.is_grad_enabled) == [True]
    finally:
        torch.set_grad_enabled(True)
