"""Fixes to the CPU reference found while writing other backends against it: gather /
scatter with an index smaller than the input in the other dims, and empty views whose
offset points past the end of their storage (both allowed by PyTorch)."""
import numpy as np

import dispatchtorch as torch


def test_gather_with_a_smaller_index():
    x = torch.arange(12.0).reshape(3, 4)
    r = x.gather(0, torch.tensor([[2, 1]]))
    assert r.tolist() == [[8.0, 5.0]]
    r = x.gather(1, torch.tensor([[3], [0]]))
    assert r.tolist() == [[3.0], [4.0]]


def test_scatter_with_a_smaller_index():
    r = torch.zeros(3, 4).scatter(0, torch.tensor([[2, 1]]), torch.tensor([[5.0, 6.0, 7.0]]))
    expected = np.zeros((3, 4))
    expected[2, 0], expected[1, 1] = 5.0, 6.0
    assert r.tolist() == expected.tolist()
    r = torch.zeros(2, 3).scatter_add(1, torch.tensor([[0, 0]]), torch.ones(2, 2))
    assert r.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_an_empty_view_may_start_past_the_end_of_its_storage():
    x = torch.empty(0, 2)
    v = x[:, 1]
    assert v.shape == (0,) and v.storage_offset() == 1 and v.stride() == (2,)
    coords = torch.nonzero(torch.zeros(3, 2), as_tuple=True)
    assert [c.shape for c in coords] == [(0,), (0,)]
