"""The example programs train under `torch.compile(model)` with the losses they have
eagerly: examples/train_digits.py and examples/tiny_transformer.py through their
`--compile` flag, and the public programs of tests/programs with their model passed
through torch.compile (compiled vs eager dispatchtorch: no PyTorch needed)."""
import copy
import os
import sys

import numpy as np
import pytest

import dispatchtorch as dt

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "programs"))


def test_train_digits_compiled_ends_with_the_eager_weights(tmp_path):
    pytest.importorskip("sklearn")
    import train_digits
    runs = {}
    for flag in ([], ["--compile"]):
        path = str(tmp_path / f"ck{len(flag)}.safetensors")
        acc = train_digits.main(["--epochs", "1", "--checkpoint", path, *flag])
        runs[bool(flag)] = (acc, dt.load(path)["model"])
    (acc_e, w_e), (acc_c, w_c) = runs[False], runs[True]
    assert acc_c == acc_e
    for k in w_e:           # the CPU's compiled gradients are eager's bit for bit
        np.testing.assert_array_equal(w_c[k].numpy(), w_e[k].numpy(), err_msg=k)


def test_tiny_transformer_compiled_has_the_eager_loss():
    import tiny_transformer
    argv = ["--steps", "12", "--context", "16", "--batch-size", "8", "--lr", "1e-2",
            "--sample-length", "5", "--max-loss-ratio", "2"]
    eager, _ = tiny_transformer.main(argv)
    compiled, _ = tiny_transformer.main(argv + ["--compile"])
    assert compiled == pytest.approx(eager, rel=1e-6)


@pytest.mark.skipif(not hasattr(dt.nn, "LSTMCell"), reason="nn.LSTMCell not in dispatchtorch")
def test_time_sequence_prediction_compiled_has_the_eager_losses():
    import time_sequence_prediction as tsp
    data = tsp.sine_waves()
    dt.manual_seed(0)
    model = tsp.build(dt).double()
    twin = copy.deepcopy(model)
    eager = tsp.train(dt, model, data)
    compiled = tsp.train(dt, dt.compile(twin), data)
    np.testing.assert_allclose(compiled, eager, rtol=1e-9)


def test_mini_gpt_amp_compiled_has_the_eager_losses():
    import mini_gpt_amp
    config = mini_gpt_amp.GPTConfig()
    dt.manual_seed(0)
    model = mini_gpt_amp.build(dt, config)
    twin = copy.deepcopy(model)
    order = np.random.default_rng(1).integers(0, 64, size=64).tolist()
    losses = []
    for m in (model, dt.compile(twin)):
        dt.manual_seed(1)
        losses.append(mini_gpt_amp.train(
            dt, m, mini_gpt_amp.CopyTask(dt, 64, config.block_size, config.vocab_size), order))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)
