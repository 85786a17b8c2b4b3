"""Seeded streams equal PyTorch's CPU generator bit for bit (recorded answers always;
PyTorch 2.13 itself where it is installed)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dispatchtorch as dt
from tests.core.random_stream_cases import CASES, RECORDED, SEEDS, fingerprint, run

try:
    import torch
    TORCH = torch if torch.__version__.startswith("2.13") else None
except ImportError:
    TORCH = None

EXPECTED = json.loads(RECORDED.read_text())
CELLS = [(name, seed) for name in CASES for seed in SEEDS]


@pytest.mark.parametrize("name,seed", CELLS, ids=[f"{n}-{s}" for n, s in CELLS])
def test_matches_recorded_pytorch_stream(name, seed):
    got = fingerprint(run(dt, name, seed))
    want = EXPECTED[name][str(seed)]
    assert (got["dtype"], got["shape"], got["head"]) == (want["dtype"], want["shape"], want["head"])
    assert got["sha256"] == want["sha256"]


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_itself(name):
    for seed in SEEDS:
        np.testing.assert_array_equal(run(dt, name, seed), run(TORCH, name, seed))


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
def test_state_bytes_move_between_libraries():
    TORCH.manual_seed(3)
    TORCH.randn(3)                                   # leaves a cached normal in the state
    dt.set_rng_state(dt.tensor(TORCH.get_rng_state().numpy()))
    np.testing.assert_array_equal(dt.get_rng_state().numpy(), TORCH.get_rng_state().numpy())
    np.testing.assert_array_equal(dt.randn(5).numpy(), TORCH.randn(5).numpy())
    TORCH.set_rng_state(TORCH.from_numpy(dt.get_rng_state().numpy()))
    np.testing.assert_array_equal(dt.rand(40).numpy(), TORCH.rand(40).numpy())


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
def test_orthogonal_init_matches_to_rounding():
    """The Gaussian draw is PyTorch's; the QR runs in numpy's LAPACK, so equal to rounding."""
    for seed in SEEDS:
        got = run(dt, "xavier_normal_", seed)   # warm: same stream position for both
        dt.manual_seed(seed)
        TORCH.manual_seed(seed)
        ours = dt.nn.init.orthogonal_(dt.empty(4, 6)).numpy()
        theirs = TORCH.nn.init.orthogonal_(TORCH.empty(4, 6)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
        assert got.shape == (10, 20)


def test_generator_seed_state_and_fork_rng():
    g = dt.Generator().manual_seed(5)
    assert g.initial_seed() == 5
    state = g.get_state()
    assert state.numel() == 5056 and state.dtype is dt.uint8
    first = dt.rand(4, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(dt.rand(4, generator=g).numpy(), first.numpy())
    dt.manual_seed(11)
    with dt.random.fork_rng():
        dt.rand(100)
    dt.manual_seed(11)
    expected = dt.rand(3)
    dt.manual_seed(11)
    with dt.random.fork_rng():
        dt.rand(100)
    np.testing.assert_array_equal(dt.rand(3).numpy(), expected.numpy())


def test_bad_seed_and_state_are_refused():
    with pytest.raises(RuntimeError, match="manual_seed"):
        dt.manual_seed(2 ** 64)
    with pytest.raises(RuntimeError, match="5056 bytes"):
        dt.set_rng_state(dt.zeros(10, dtype=dt.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        dt.set_rng_state(dt.zeros(5056))
