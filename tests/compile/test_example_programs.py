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


# -- PyTorch's example programs (tests/examples_pytorch), compiled vs eager -------------

sys.path.insert(0, os.path.join(HERE, "..", "examples_pytorch"))


def _compiled_calls(cls):
    """cls, each instance's calls running through torch.compile(instance): what a
    program's `model = torch.compile(model)` after building and loading it does (the
    programs build their models inside run())."""
    plain = cls.__call__

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d.get("_in_compiled"):                # the capture calling the module itself
            return plain(self, *args, **kwargs)
        cm = d.get("_compiled")
        if cm is None:
            cm = d["_compiled"] = dt.compile(self)
        d["_in_compiled"] = True
        try:
            return cm(*args, **kwargs)
        finally:
            d["_in_compiled"] = False
    cls.__call__ = __call__
    return cls


def _noise(seed):
    rng = np.random.default_rng(seed)
    return lambda shape: rng.standard_normal(shape).astype(np.float32)


def _vae(m, compiled):
    rng = np.random.default_rng(3)
    if compiled:
        _compiled_calls(m.VAE)
    return m.run([rng.random((8, 1, 28, 28)).astype(np.float32) for _ in range(3)], _noise(4))


def _super_resolution(m, compiled):
    rng = np.random.default_rng(5)
    pairs = []
    for _ in range(3):
        hi = rng.random((2, 1, 12, 12)).astype(np.float32)
        pairs.append((hi.reshape(2, 1, 4, 3, 4, 3).mean((3, 5)).astype(np.float32), hi))
    if compiled:
        _compiled_calls(m.Net)
    return m.run(pairs)


def _fast_neural_style(m, compiled):
    rng = np.random.default_rng(6)
    images = [(rng.random((1, 3, 16, 16)) * 255).astype(np.float32) for _ in range(2)]
    if compiled:
        _compiled_calls(m.TransformerNet)
        _compiled_calls(m.SmallVgg)
    return m.run(images, (rng.random((3, 16, 16)) * 255).astype(np.float32))


def _dcgan(m, compiled):
    if not hasattr(dt.Tensor, "is_xpu"):
        pytest.skip("the program reads Tensor.is_xpu")
    rng = np.random.default_rng(1)
    images = [np.tanh(rng.standard_normal((2, 3, 64, 64))).astype(np.float32) for _ in range(2)]
    if compiled:
        build = m.models

        def models(*a, **k):
            nets = build(*a, **k)
            for net in nets:
                _compiled_calls(type(net))
            return nets
        m.models = models
    return m.run(images, _noise(2))


def _word_language_model(kind):
    def go(m, compiled):
        if compiled:
            _compiled_calls(m.TransformerModel if kind == "Transformer" else m.RNNModel)
        rng = np.random.default_rng(0)
        tokens = np.where(rng.random(60) < 0.2, rng.integers(0, 12, 60),
                          np.arange(60) % 12).astype(np.int64)
        return m.run(kind, tokens, 12)
    return go


@pytest.mark.parametrize("name,run", [
    ("vae", _vae), ("super_resolution", _super_resolution),
    ("fast_neural_style", _fast_neural_style), ("dcgan", _dcgan),
    ("word_language_model", _word_language_model("LSTM")),
    ("word_language_model", _word_language_model("Transformer"))])
def test_pytorch_examples_compiled_have_the_eager_losses(name, run):
    from runner import load
    losses = []
    for compiled in (False, True):
        dt.manual_seed(0)
        losses.append(run(load(name, "dispatchtorch"), compiled))
    assert np.all(np.isfinite(losses[0]))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)
