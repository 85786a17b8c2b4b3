"""torch.native_batch_norm's in-place running-statistics update and eval-mode outputs
against PyTorch (OpInfo compares the returned tensors only)."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_updates_running_stats_as_pytorch(training):
    rng = np.random.default_rng(6)
    x, rm, rv = rng.standard_normal((5, 3, 4)), rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    results = []
    for lib in (dt, torch):
        m, v = lib.tensor(rm), lib.tensor(rv)
        outs = lib.native_batch_norm(lib.tensor(x), lib.tensor(w), lib.tensor(b), m, v,
                                     training, 0.3, 1e-5)
        results.append([o.numpy() for o in outs] + [m.numpy(), v.numpy()])
    for a, b_ in zip(*results):
        assert a.shape == b_.shape
        np.testing.assert_allclose(a, b_, rtol=1e-12, atol=1e-12)
