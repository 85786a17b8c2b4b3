"""Reference-backend behaviours the cuda backend's tests found missing."""
import numpy as np
import pytest

import dispatchtorch as torch


def test_bfloat16_division_is_floating_point():
    a = torch.tensor([7.0, 1.0, -1.0, 0.0], dtype=torch.bfloat16)
    b = torch.tensor([2.0, 0.0, 0.0, 0.0], dtype=torch.bfloat16)
    q = (a / b).float().tolist()
    assert q[:3] == [3.5, float("inf"), float("-inf")] and np.isnan(q[3])
    r = torch.fmod(torch.tensor([7.5, 1.0], dtype=torch.bfloat16),
                   torch.tensor([2.0, 0.0], dtype=torch.bfloat16)).float().tolist()
    assert r[0] == 1.5 and np.isnan(r[1])


def test_gather_and_scatter_take_an_index_smaller_than_the_input():
    x = torch.arange(20).reshape(4, 5)
    index = torch.tensor([[0, 1, 2], [1, 2, 3]])
    assert torch.gather(x, 1, index).tolist() == [[0, 1, 2], [6, 7, 8]]
    out = torch.zeros(3, 4, dtype=torch.int64).scatter(0, torch.tensor([[2, 0]]),
                                                       torch.tensor([[5, 6, 7]]))
    assert out.tolist() == [[0, 6, 0, 0], [0, 0, 0, 0], [5, 0, 0, 0]]


def test_against_pytorch():
    pt = pytest.importorskip("torch")
    x = np.arange(30.0).reshape(5, 6)
    index = np.array([[4, 0, 2], [1, 1, 3]])
    src = np.full((2, 3), -1.0)
    assert torch.gather(torch.tensor(x), 1, torch.tensor(index)).tolist() == \
        pt.gather(pt.tensor(x), 1, pt.tensor(index)).tolist()
    assert torch.tensor(x).scatter(1, torch.tensor(index), torch.tensor(src)).tolist() == \
        pt.tensor(x).scatter(1, pt.tensor(index), pt.tensor(src)).tolist()
