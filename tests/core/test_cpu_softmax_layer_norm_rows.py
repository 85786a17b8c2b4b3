"""The CPU softmax and layer_norm kernels on many short rows (their sums by BLAS gemv)
against float64 formulas."""
import numpy as np

from dispatchtorch_cpu.composites import KERNELS

rng = np.random.default_rng(4)


def test_softmax_of_attention_shaped_scores():
    x = (rng.standard_normal((8, 4, 64, 64)) * 3).astype(np.float32)
    out = np.empty_like(x)
    KERNELS["softmax"](out, x, dim=-1)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-8)


def test_layer_norm_of_short_rows():
    x = (rng.standard_normal((16, 64, 64)) + 2).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    out = np.empty_like(x)
    KERNELS["layer_norm"](out, x, w, b, normalized_shape=(64,), eps=1e-5)
    xd = x.astype(np.float64)
    m = xd.mean(-1, keepdims=True)
    want = (xd - m) / np.sqrt(((xd - m) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=3e-6)
