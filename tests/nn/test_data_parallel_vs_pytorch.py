"""nn.DataParallel in one process, as PyTorch's CPU build runs it: the wrapped module
under `module.`, the same outputs."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as torch


def test_nn_dataparallel_is_the_parallel_one():
    assert torch.nn.DataParallel is torch.nn.parallel.DataParallel
    assert "DataParallel" in torch.nn.__all__


def test_dataparallel_forward_and_state_dict_as_pytorch():
    pt = pytest.importorskip("torch")
    theirs = pt.nn.DataParallel(pt.nn.Linear(3, 2))
    ours = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    ours.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight", "module.bias"]
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(torch.tensor(x)).detach().numpy(),
                               theirs(pt.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    assert repr(ours) == repr(theirs)
