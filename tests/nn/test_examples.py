"""The examples run end to end (short runs; the full runs are `make train` and
`python examples/tiny_transformer.py`)."""
import contextlib
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@pytest.fixture(autouse=True)
def one_blas_thread():
    """What the examples set for themselves before numpy loads (here it already has)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(1, user_api="blas")
    with limits:
        yield


def test_train_digits_short_run_saves_and_reloads(tmp_path):
    pytest.importorskip("sklearn")
    import train_digits
    acc = train_digits.main(["--epochs", "3", "--checkpoint", str(tmp_path / "ck.pt")])
    assert acc > 0.85          # the reloaded model's accuracy equals it, or main() exits
    assert (tmp_path / "ck.pt").stat().st_size > 10_000


def test_tiny_transformer_short_run_learns_and_samples(capsys):
    import tiny_transformer
    loss, entropy = tiny_transformer.main(["--steps", "60", "--context", "16", "--batch-size",
                                           "16", "--lr", "1e-2", "--sample-length", "20",
                                           "--max-loss-ratio", "0.95"])
    assert loss < 0.95 * entropy
    assert "Shall I compare thee" in capsys.readouterr().out
