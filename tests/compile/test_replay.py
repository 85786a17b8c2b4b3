"""The replay: intermediates live in buffers made once and kept between calls (only
outputs and what the backward reads are allocated per call), and a program run by
two threads at once still gives each its own results."""
import threading

import numpy as np

import dispatchtorch as torch
from tests.compile.compile_helpers import _close, _entries, _np


def test_only_outputs_and_saved_values_are_allocated_per_call():
    def f(x, w):
        h = torch.relu(x @ w)                 # matmul result, relu result: intermediates
        return torch.tanh(h @ w.t()).sum(1)

    x, w = torch.randn(8, 5), torch.randn(5, 6)
    cf = torch.compile(f)
    with torch.no_grad():
        cf(x, w)
        for _ in range(3):                    # the kept buffers are overwritten each call
            x2 = torch.randn(8, 5)
            _close(cf(x2, w), f(x2, w), "cpu")
    entry, = _entries(cf)
    kept, fresh = entry.forward.allocations()
    assert fresh == 1 and kept >= 2           # the output alone is fresh
    # an output is never a kept buffer: two calls' results are independent
    a = cf(x, w)
    b = cf(x * 2.0, w)
    np.testing.assert_allclose(_np(a), _np(f(x, w)), rtol=1e-6)
    assert not np.allclose(_np(a), _np(b))


def test_saved_values_stay_per_call_for_two_pending_backwards():
    lin = torch.nn.Linear(4, 3)
    twin = torch.nn.Linear(4, 3)
    twin.load_state_dict(lin.state_dict())
    cm = torch.compile(twin)
    x1, x2 = torch.randn(5, 4), torch.randn(5, 4)
    cm(x1).relu().sum().backward()            # capture
    twin.zero_grad()
    l1, l2 = cm(x1).relu().sum(), cm(x2).relu().sum()   # two forwards, then both backwards
    (l1 + l2 * 2.0).backward()
    (lin(x1).relu().sum() + lin(x2).relu().sum() * 2.0).backward()
    np.testing.assert_allclose(_np(twin.weight.grad), _np(lin.weight.grad), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(twin.bias.grad), _np(lin.bias.grad), rtol=1e-5, atol=1e-6)


def test_two_threads_running_one_program_get_their_own_results():
    def f(x):
        h = torch.relu(x @ x.t()) * 0.01       # BLAS releases the GIL: the threads overlap
        return torch.exp(h @ x).sum(0)

    cf = torch.compile(f)
    xs = [torch.randn(192, 192) for _ in range(4)]
    with torch.no_grad():
        cf(xs[0])
        want = [_np(f(x)) for x in xs]
    errors = []
    barrier = threading.Barrier(2)

    def work(k):
        barrier.wait()
        with torch.no_grad():
            for i in range(12):
                j = (i + k) % 4
                got = _np(cf(xs[j]))
                if not np.allclose(got, want[j], rtol=1e-4):
                    errors.append((k, i))
    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
