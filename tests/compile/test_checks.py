"""Index checks inside a compiled graph: embedding's and index_select's range checks
read the indices on the host, as eager does; a capture keeps them as checks instead of
breaking the graph, and a replay raises eager's error at the same call, with the
effects of what ran before it and nothing after."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._compile.compiled import Entry
from tests.compile.compile_helpers import DEVICES, _close, _entries, _np


def _error_of(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("dev", DEVICES)
def test_embedding_compiles_whole_and_a_bad_index_raises_eagers_error(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 3)).to(dev)
    cm = torch.compile(model)
    good = torch.tensor([[1, 9], [0, 3]], device=dev)
    cm(good)
    _close(cm(good), model(good), dev)
    entry, = _entries(cm._compiled)
    assert isinstance(entry, Entry) and not entry.graph.breaks and entry.forward.n_checks == 1
    for bad in ([[1, 10], [0, 3]], [[1, 2], [-1, 3]]):
        bad = torch.tensor(bad, device=dev)
        want = _error_of(model, bad)
        assert want[0] is IndexError
        assert _error_of(cm, bad) == want
    _close(cm(good), model(good), dev)       # the compiled entry still runs
    assert len(cm._compiled.cache) == 1


def test_writes_before_a_failing_check_happen_as_in_eager_and_none_after():
    emb = torch.nn.Embedding(5, 2)

    def f(x, idx, acc):
        x.add_(1.0)                        # before the check: done in eager too
        out = emb(idx)
        acc.mul_(2.0)                      # after it: never reached
        return out

    cf = torch.compile(f)
    x, acc = torch.zeros(3), torch.ones(3)
    ok = torch.tensor([0, 4])
    cf(x, ok, acc)
    cf(x, ok, acc)
    ex, eacc = x.clone(), acc.clone()
    bad = torch.tensor([0, 5])
    want = _error_of(f, ex, bad, eacc)
    assert _error_of(cf, x, bad, acc) == want
    np.testing.assert_array_equal(_np(x), _np(ex))        # incremented once more
    np.testing.assert_array_equal(_np(acc), _np(eacc))    # untouched
    np.testing.assert_array_equal(_np(x), [3.0, 3.0, 3.0])


def test_index_select_check_and_its_repeat_on_the_same_indices():
    def f(a, i):
        return a.index_select(0, i) * 2.0 + a.index_select(0, i.reshape(2, 1).reshape(2))

    cf = torch.compile(f)
    a = torch.randn(4, 3)
    i = torch.tensor([3, 0])
    cf(a, i)
    _close(cf(a, i), f(a, i), "cpu")
    entry, = _entries(cf)
    assert entry.forward.n_checks == 1          # the second reads the same elements
    want = _error_of(f, a, torch.tensor([4, 0]))
    assert want[0] is IndexError and "index_select" in want[1]
    assert _error_of(cf, a, torch.tensor([4, 0])) == want
