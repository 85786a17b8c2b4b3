"""The replay: intermediates live in buffers made once and kept between calls (only
outputs and what the backward reads are allocated per call), and a program run by
two threads at once still gives each its own results."""
import copy
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


def test_an_intermediate_takes_the_buffer_of_one_whose_uses_have_passed():
    def f(x, w):
        h = x @ w                             # four same-shape matmul results in a row:
        for _ in range(3):                    # each read only by the next
            h = h @ w
        return h.sum()

    x, w = torch.randn(16, 16), torch.randn(16, 16)
    with torch.no_grad():
        counts = {}
        for reuse in (True, False):
            cf = torch.compile(f, options={"buffer_reuse": reuse})
            cf(x, w)
            for _ in range(2):
                x2 = torch.randn(16, 16)
                _close(cf(x2, w), f(x2, w), "cpu")
            entry, = _entries(cf)
            counts[reuse] = entry.forward.allocations()
    assert counts[False] == (4, 1)            # a buffer per intermediate, the sum fresh
    assert counts[True] == (2, 1)             # the third and fourth reuse the first two


def test_gradients_with_reused_backward_buffers_equal_eager():
    torch.manual_seed(0)
    layers = []
    for _ in range(3):
        layers += [torch.nn.Linear(12, 12), torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(12, 3))
    twin = copy.deepcopy(net)
    cm = torch.compile(twin, options={"buffer_reuse": True})
    for _ in range(3):                        # capture, then two replays
        x = torch.randn(10, 12)
        net.zero_grad()
        twin.zero_grad()
        net(x).square().sum().backward()
        cm(x).square().sum().backward()
        for a, b in zip(net.parameters(), twin.parameters()):
            np.testing.assert_array_equal(_np(b.grad), _np(a.grad))
    entry, = _entries(cm._compiled)
    kept, _ = entry.backward.allocations()
    unshared = torch.compile(copy.deepcopy(net), options={"buffer_reuse": False})
    unshared(x).square().sum().backward()
    entry2, = _entries(unshared._compiled)
    assert kept < entry2.backward.allocations()[0]      # the tanh backward's buffers shared
