"""A replay's host random draws are made ahead on a worker thread (_compile/draws.py):
the values, their order and the generator's state afterwards are eager's, and a
failing index check before the draws leaves the generator untouched, as eager's."""
import os
import select
import signal
import threading

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._compile import draws
from tests.compile.compile_helpers import DEVICES, _entries, _np


class _TwoDropouts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 24)
        self.lin = torch.nn.Linear(24, 48)

    def forward(self, idx):
        h = torch.nn.functional.dropout(self.emb(idx), 0.3)
        return torch.nn.functional.dropout(self.lin(h), 0.6) * 2.0


@pytest.mark.parametrize("dev", DEVICES)
def test_draws_made_ahead_give_eagers_values_and_generator_state(dev):
    torch.manual_seed(0)
    model = _TwoDropouts().to(dev)
    cm = torch.compile(model)
    idx = torch.tensor([[1, 2, 3], [9, 0, 4]], device=dev)
    runs = []
    for fn in (model, cm):
        torch.manual_seed(3)
        outs = [_np(fn(idx)) for _ in range(3)]
        runs.append((outs, _np(torch.rand(5))))      # where the generator ended
    for e, c in zip(runs[0][0], runs[1][0]):
        np.testing.assert_array_equal(c, e)
    np.testing.assert_array_equal(runs[1][1], runs[0][1])
    entry, = _entries(cm._compiled)
    start, ahead = entry.forward._draws_ahead()
    if dev == "cpu":            # the CPU's kernels run in the calling thread: drawn in turn
        assert ahead == []
    else:
        assert len(ahead) == 2 and start >= 1       # after the embedding's index check


@pytest.mark.parametrize("dev", [d for d in DEVICES if d != "cpu"])
def test_the_draws_run_on_the_worker_thread(monkeypatch, dev):
    seen = []
    real = draws.Draws.start

    def start(self):
        seen.append(len(self.draws))
        return real(self)
    monkeypatch.setattr(draws.Draws, "start", start)
    threads = []
    cf = torch.compile(lambda x: torch.nn.functional.dropout(x, 0.5) + 1.0)
    x = torch.ones(64, device=dev)
    cf(x)
    from dispatchtorch.ops import random as R
    real_draw = R.draw

    def draw(*args):
        threads.append(threading.current_thread().name)
        return real_draw(*args)
    monkeypatch.setattr(R, "draw", draw)
    cf(x)
    assert seen == [1] and threads and all(t.startswith("dispatchtorch-draws") for t in threads)


@pytest.mark.parametrize("dev", DEVICES)
def test_a_failing_check_before_the_draws_leaves_the_generator_as_eager(dev):
    torch.manual_seed(0)
    model = _TwoDropouts().to(dev)
    cm = torch.compile(model)
    cm(torch.tensor([[1, 2]], device=dev))
    bad = torch.tensor([[1, 10]], device=dev)
    ends = []
    for fn in (model, cm):
        torch.manual_seed(4)
        with pytest.raises(IndexError):
            fn(bad)
        ends.append(_np(torch.rand(5)))
    np.testing.assert_array_equal(ends[1], ends[0])
    torch.manual_seed(4)
    np.testing.assert_array_equal(ends[0], _np(torch.rand(5)))   # no draw was made


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_gets_its_own_worker():
    assert draws.Draws([lambda: 1]).start()[0].result(timeout=30) == 1   # the parent's exists
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                            # the child: the parent's thread is not here
        try:
            got = draws.Draws([lambda: 2, lambda: 3]).start()
            os.write(w, b"%d%d" % (got[0].result(timeout=30), got[1].result(timeout=30)))
        finally:
            os._exit(0)
    os.close(w)
    ready, _, _ = select.select([r], [], [], 60)
    got = os.read(r, 2) if ready else b"hung"
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert got == b"23"
