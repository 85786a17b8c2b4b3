"""Index checks moved to the earliest point they may run at (_compile/hoist.py): the
embedding backward's checks run before the backward's kernels (their host read waits
for little), never past a write outside the replay or another check."""
import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np


def _positions(program):
    checks = [i for i, st in enumerate(program.steps) if getattr(st[0], "is_check", False)]
    kernels = [i for i, st in enumerate(program.steps) if st[3] and i not in checks]
    return checks, kernels


@pytest.mark.parametrize("dev", DEVICES)
def test_backward_checks_run_before_the_backward_kernels(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(11, 6), torch.nn.Linear(6, 3)).to(dev)
    twin = torch.nn.Sequential(torch.nn.Embedding(11, 6), torch.nn.Linear(6, 3)).to(dev)
    twin.load_state_dict(model.state_dict())
    cm = torch.compile(twin)
    idx = torch.tensor([[1, 10, 3], [0, 3, 7]], device=dev)
    for _ in range(2):
        for m in (model, cm):
            m.zero_grad()
            (m(idx) * torch.arange(3.0, device=dev)).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        _close(q.grad, p.grad, dev)
    entry, = _entries(cm._compiled)
    checks, kernels = _positions(entry.backward)
    assert checks and kernels and max(checks) < min(kernels)
    # recorded where embedding's backward ran: after the linear's backward kernels
    recorded = [n.kind for n in entry.graph.nodes if n.phase == "backward"]
    assert recorded.index("kernel") < len(recorded) - 1


def test_a_check_stays_after_a_write_into_an_argument():
    emb = torch.nn.Embedding(5, 2)

    def f(x, idx):
        x.add_(1.0)                         # an effect outside the replay
        return emb(idx) * 2.0

    cf = torch.compile(f)
    x = torch.zeros(3)
    cf(x, torch.tensor([0, 4]))
    cf(x, torch.tensor([0, 4]))
    entry, = _entries(cf)
    checks, _ = _positions(entry.forward)
    write = max(i for i, st in enumerate(entry.forward.steps) if "add" in st[3])
    assert min(checks) > write


def test_two_failing_checks_raise_the_first_as_eager():
    a, b = torch.nn.Embedding(4, 2), torch.nn.Embedding(6, 2)

    def f(i, j):
        return a(i) * 2.0 + b(j)

    cf = torch.compile(f)
    cf(torch.tensor([0, 3]), torch.tensor([5, 1]))
    cf(torch.tensor([0, 3]), torch.tensor([5, 1]))
    bad = (torch.tensor([4, 0]), torch.tensor([6, 1]))
    with pytest.raises(IndexError) as eager:
        f(*bad)
    with pytest.raises(IndexError) as compiled:
        cf(*bad)
    assert str(compiled.value) == str(eager.value)
    with pytest.raises(IndexError) as only_second:
        cf(torch.tensor([3, 0]), bad[1])
    assert str(only_second.value) != str(eager.value)
    np.testing.assert_array_equal(_np(cf(torch.tensor([1, 2]), torch.tensor([3, 4]))),
                                  _np(f(torch.tensor([1, 2]), torch.tensor([3, 4]))))
