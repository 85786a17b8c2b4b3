"""Shared cpu tensors reach spawn and forkserver children (pytorch/examples'
mnist_hogwild sets the start method to spawn): the child maps the parent's memory, so its
in-place updates and optimizer steps are the parent's; views and parameters of one
storage stay on one storage; Queues carry shared tensors both ways, Pipes too; nothing is left in
/dev/shm afterwards."""
import gc
import multiprocessing
import os
import sys

import numpy as np
import pytest

import dispatchtorch as torch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fd passing, /dev/shm")

LR = 0.25


def _shm():
    """/dev/shm's entries other than POSIX semaphores ('sem.*': multiprocessing's and
    other test workers' locks come and go there while the suite runs in parallel; shared
    tensors are memfds and never named there)."""
    return {n for n in os.listdir("/dev/shm") if not n.startswith("sem.")}


def _child(model, base, view, inq, outq, done, conn):
    x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    with torch.no_grad():
        for p in model.parameters():
            p.data.add_(1)
        view.mul_(2)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    got = inq.get(timeout=20)           # a shared tensor through a Queue
    got.fill_(7.0)
    conn.recv().add_(3.0)               # a strided view through a Pipe
    mine = torch.zeros(3).share_memory_()
    outq.put((view.data_ptr() - base.data_ptr(), model.weight.is_shared(), got, mine))
    done.wait(20)                       # the sender stays alive until its tensor is taken
    outq.put(mine.tolist())


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_child_updates_the_parents_shared_tensors_in_place(method):
    before = _shm()
    ctx = multiprocessing.get_context(method)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    w0, b0 = model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy()
    model.share_memory()
    base = torch.ones(4, 4).share_memory_()
    view = base[1:, ::2]
    sent = torch.zeros(2).share_memory_()
    piped = torch.zeros(2, 3).share_memory_()
    inq, outq, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    mine, theirs_end = ctx.Pipe()
    p = ctx.Process(target=_child, args=(model, base, view, inq, outq, done, theirs_end))
    p.start()
    inq.put(sent)
    mine.send(piped[:, 1])
    offset, weight_shared, back, theirs = outq.get(timeout=30)
    theirs.fill_(5.0)                   # the child's own shared tensor, written here
    done.set()
    assert outq.get(timeout=20) == [5.0, 5.0, 5.0]
    p.join(20)
    assert p.exitcode == 0
    # the view was rebuilt on the child's one storage of `base`, 4 floats in
    assert offset == 4 * 4 and weight_shared
    # +1, then one SGD step: d sum(Wx + b)/dW = column sums of x, /db = batch size
    xsum = np.array([1.5, 1.0, 7.0])
    np.testing.assert_allclose(model.weight.detach().numpy(), w0 + 1 - LR * xsum, rtol=1e-6)
    np.testing.assert_allclose(model.bias.detach().numpy(), b0 + 1 - LR * 2, rtol=1e-6)
    np.testing.assert_array_equal(base.numpy(), [[1, 1, 1, 1], [2, 1, 2, 1], [2, 1, 2, 1],
                                                 [2, 1, 2, 1]])
    assert sent.tolist() == [7.0, 7.0]
    assert piped.tolist() == [[0.0, 3.0, 0.0], [0.0, 3.0, 0.0]]
    # sent back to its creator, a shared tensor is rebuilt on the creator's own storage
    assert back.data_ptr() == sent.data_ptr() and back.is_shared()
    # autograd still works on the shared parameters
    model.zero_grad()
    model(torch.ones(1, 3)).sum().backward()
    np.testing.assert_array_equal(model.weight.grad.numpy(), np.ones((2, 3)))
    for q in (inq, outq):
        q.close()
        q.join_thread()
    mine.close()
    theirs_end.close()
    del model, base, view, sent, piped, back, theirs, inq, outq, q, done, p, mine, theirs_end
    gc.collect()
    assert _shm() - before == set()


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def _train(rank, model, lock, results):
    """mnist_hogwild's train(): SGD steps on this worker's data, straight into the shared
    model; reports the sum of the steps it made, each computed here in float64 as
    -lr * grad (the lock keeps the two workers' read-modify-writes from overlapping, so
    the parent can check the sum exactly)."""
    gen = torch.Generator().manual_seed(100 + rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    deltas = [np.zeros(p.shape) for p in model.parameters()]
    for _ in range(3):
        x = torch.randn(5, 4, generator=gen)
        y = torch.randint(0, 3, (5,), generator=gen)
        with lock:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            for d, p in zip(deltas, model.parameters()):
                d -= 0.1 * p.grad.numpy().astype(np.float64)
            opt.step()
    results.put((rank, [torch.from_numpy(d) for d in deltas]))


def test_hogwild_with_spawned_workers():
    before = _shm()
    ctx = multiprocessing.get_context("spawn")
    torch.manual_seed(1)
    model = _Net()
    model.share_memory()
    initial = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
    lock, results = ctx.Lock(), ctx.Queue()
    procs = [ctx.Process(target=_train, args=(rank, model, lock, results)) for rank in range(2)]
    for p in procs:
        p.start()
    reports = dict(results.get(timeout=30) for _ in procs)
    for p in procs:
        p.join(20)
        assert p.exitcode == 0
    assert sorted(reports) == [0, 1]
    for i, p in enumerate(model.parameters()):
        total = reports[0][i].numpy() + reports[1][i].numpy()
        assert np.abs(total).max() > 1e-3          # the workers did move every parameter
        np.testing.assert_allclose(p.detach().numpy(), initial[i] + total, rtol=0, atol=1e-6)
    results.close()
    results.join_thread()
    del model, p, procs, lock, results
    gc.collect()
    assert _shm() - before == set()
