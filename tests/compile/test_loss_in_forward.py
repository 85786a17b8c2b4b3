"""A model computing its loss inside forward (nanoGPT's `forward(idx, targets)`):
cross_entropy's target-range check is kept in the graph as a check, not a break, so
the whole forward and backward compile; a bad target still raises eager's IndexError."""
import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F
from dispatchtorch._compile.compiled import Entry
from tests.compile.compile_helpers import _entries, _np


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, idx, targets=None):
        logits = self.head(torch.tanh(self.wte(idx)))
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               ignore_index=-1)
        return logits, loss


def _error_of(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value)


def test_loss_inside_forward_compiles_whole_with_eagers_values_and_grads():
    torch.manual_seed(0)
    model = TinyLM()
    cm = torch.compile(model, fullgraph=True)     # a break would raise here
    idx = torch.tensor([[1, 4, 7], [0, 10, 2]])
    tgt = torch.tensor([[4, 7, -1], [10, 2, 3]])   # -1: ignored, as nanoGPT's padding
    for _ in range(2):
        model.zero_grad()
        _, want = model(idx, tgt)
        want.backward()
        want_g = [_np(p.grad).copy() for p in model.parameters()]
        model.zero_grad()
        _, got = cm(idx, tgt)
        got.backward()
        np.testing.assert_array_equal(_np(got), _np(want))
        for p, g in zip(model.parameters(), want_g):
            np.testing.assert_array_equal(_np(p.grad), g)
    entry, = _entries(cm._compiled)
    assert isinstance(entry, Entry) and not entry.graph.breaks
    assert any(c.ignore == -1 for c in entry.graph.checks)


@pytest.mark.parametrize("bad", [[[4, 7, 11], [10, 2, 3]], [[4, 7, -1], [-2, 2, 3]]])
def test_a_bad_target_raises_eagers_error_in_the_compiled_graph(bad):
    torch.manual_seed(0)
    model = TinyLM()
    cm = torch.compile(model)
    idx = torch.tensor([[1, 4, 7], [0, 10, 2]])
    cm(idx, torch.tensor([[4, 7, -1], [10, 2, 3]]))
    want = _error_of(model, idx, torch.tensor(bad))
    assert want[0] is IndexError and "out of bounds" in want[1]
    try:                                   # PyTorch's own error, where it is installed
        import torch as pt
    except ImportError:
        pt = None
    if pt is not None:
        logits = pt.zeros(6, 11)
        with pytest.raises(IndexError) as info:
            pt.nn.functional.cross_entropy(logits, pt.tensor(bad).view(-1), ignore_index=-1)
        assert str(info.value) == want[1]
    bad = torch.tensor(bad)
    assert _error_of(cm, idx, bad) == want
    assert isinstance(_entries(cm._compiled)[0], Entry)   # still compiled, not eager


def test_all_targets_ignored_passes_as_in_eager():
    torch.manual_seed(0)
    model = TinyLM()
    cm = torch.compile(model)
    idx = torch.tensor([[1, 4, 7]])
    cm(idx, torch.tensor([[4, 7, 1]]))
    tgt = torch.full((1, 3), -1, dtype=torch.int64)
    np.testing.assert_array_equal(_np(cm(idx, tgt)[1]), _np(model(idx, tgt)[1]))
