"""torch.nn.attention against PyTorch 2.13: sdpa_kernel's flags and refusals, and
flex_attention's eager results (outputs, log-sum-exp, fully masked rows, errors), block
tables (create_block_mask, from_kv_blocks, _adjust) and, where PyTorch's CPU build has no
backward, gradients against the same attention written out in PyTorch's ops."""
import warnings

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.nn.attention import SDPBackend, sdpa_kernel
from dispatchtorch.nn.attention import flex_attention as fa

torch = pytest.importorskip("torch")
from torch.nn.attention import SDPBackend as TSDPBackend, sdpa_kernel as t_sdpa_kernel  # noqa: E402
from torch.nn.attention import flex_attention as tfa  # noqa: E402

rng = np.random.default_rng(7)
warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")


def _pair(*shape, dtype=np.float32):
    a = rng.standard_normal(shape).astype(dtype)
    return dt.tensor(a), torch.tensor(a)


def _message(fn):
    try:
        fn()
    except Exception as e:              # noqa: BLE001 (compared by the caller)
        return type(e), str(e).replace("torch.", "").replace("dispatchtorch.", "")
    return None


# -- sdpa_kernel ---------------------------------------------------------------------------

def test_backends_are_pytorchs_enum():
    for ours in SDPBackend:
        theirs = getattr(TSDPBackend, ours.name)
        assert int(ours) == int(theirs) and repr(ours) == repr(theirs) and str(ours) == str(theirs)


@pytest.mark.parametrize("choice", [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"],
                                    ["CUDNN_ATTENTION"], ["EFFICIENT_ATTENTION", "MATH"],
                                    ["OVERRIDEABLE"], ["ERROR"]])
def test_sdpa_kernel_sets_the_flags_and_refuses_as_pytorch_on_a_cpu_tensor(choice):
    q, tq = _pair(2, 3, 5, 8)

    def run(m, kernel, enum, flags, x):
        with kernel([getattr(enum, c) for c in choice]):
            seen = (flags.flash_sdp_enabled(), flags.mem_efficient_sdp_enabled(),
                    flags.math_sdp_enabled(), flags.cudnn_sdp_enabled())
            got = _message(lambda: m.nn.functional.scaled_dot_product_attention(x, x, x))
        return seen, got
    ours = run(dt, sdpa_kernel, SDPBackend, dt.backends.cuda, q)
    theirs = run(torch, t_sdpa_kernel, TSDPBackend, torch.backends.cuda, tq)
    assert ours == theirs
    assert dt.backends.cuda.math_sdp_enabled() and dt.backends.cuda.flash_sdp_enabled()


def test_sdpa_kernel_restores_after_an_error_and_checks_its_argument():
    with pytest.raises(ValueError):
        with sdpa_kernel(SDPBackend.MATH, set_priority=True):
            raise ValueError
    assert dt.backends.cuda.flash_sdp_enabled()
    assert _message(lambda: sdpa_kernel("math").__enter__()) == \
        _message(lambda: t_sdpa_kernel("math").__enter__())


# -- flex_attention ------------------------------------------------------------------------

def _causal(b, h, q, kv):
    return q >= kv


def _window(b, h, q, kv):
    return (q - kv).abs() <= 3


def _padding(b, h, q, kv):      # batch 1 attends to the first 4 keys only
    return (b == 0) | (kv < 4)


def _masks():
    return {"causal": _causal, "window": _window, "padding": _padding,
            "and": lambda m: m.and_masks(_causal, _window),
            "or": lambda m: m.or_masks(_causal, _padding)}


def _mask_of(name, mod):
    fn = _masks()[name]
    return fn(mod) if name in ("and", "or") else fn


SCORE_MODS = {
    "none": lambda m, bias: None,
    "relative": lambda m, bias: (lambda s, b, h, q, kv: s + (q - kv) * 0.1),
    "alibi": lambda m, bias: (lambda s, b, h, q, kv: s - bias[h] * (q - kv).abs()),
    "softcap": lambda m, bias: (lambda s, b, h, q, kv: m.tanh(s / 3) * 3),
}


@pytest.mark.parametrize("mask,score,gqa", [
    ("none", "none", False), ("none", "alibi", True), ("causal", "none", False),
    ("causal", "relative", True), ("window", "softcap", False), ("padding", "alibi", False),
    ("and", "relative", False), ("or", "softcap", True), ("window", "none", True)])
def test_outputs_and_lse_as_pytorch(mask, score, gqa):
    hkv = 2 if gqa else 4
    (q, tq), (k, tk), (v, tv) = _pair(2, 4, 9, 8), _pair(2, hkv, 11, 8), _pair(2, hkv, 11, 5)
    bias, tbias = _pair(4)

    def run(m, mod, x, y, z, b):
        block = None if mask == "none" else mod.create_block_mask(
            _mask_of(mask, mod), 2, None, 9, 11, device="cpu", BLOCK_SIZE=4)
        out, aux = mod.flex_attention(x, y, z, score_mod=SCORE_MODS[score](m, b), block_mask=block,
                                      enable_gqa=gqa, return_aux=mod.AuxRequest(lse=True))
        return out.detach().numpy(), aux.lse.detach().numpy()
    ours, theirs = run(dt, fa, q, k, v, bias), run(torch, tfa, tq, tk, tv, tbias)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_working_precision_and_the_input_dtype_as_pytorch(dtype):
    (q, tq), (k, tk), (v, tv) = (_pair(1, 2, 6, 4, dtype=dtype) for _ in range(3))
    ours = fa.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * 2)
    theirs = tfa.flex_attention(tq, tk, tv, score_mod=lambda s, b, h, i, j: s * 2)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64),
                               rtol=1e-12 if dtype == np.float64 else 1e-3, atol=1e-12)


def test_a_fully_masked_row_is_zero_with_minus_infinite_lse_and_no_nan_gradient():
    (q, tq), (k, tk), (v, tv) = (_pair(1, 1, 6, 4) for _ in range(3))

    def late(b, h, i, j):
        return (i >= 3) & (j <= i)
    mask = fa.create_block_mask(late, 1, 1, 6, 6, device="cpu", BLOCK_SIZE=2)
    tmask = tfa.create_block_mask(late, 1, 1, 6, 6, device="cpu", BLOCK_SIZE=2)
    out, aux = fa.flex_attention(q, k, v, block_mask=mask, return_aux=fa.AuxRequest(lse=True))
    tout, taux = tfa.flex_attention(tq, tk, tv, block_mask=tmask, return_aux=tfa.AuxRequest(lse=True))
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux.lse.numpy(), taux.lse.numpy(), rtol=1e-6)   # -inf equal
    qg = q.clone().requires_grad_()
    fa.flex_attention(qg, k, v, block_mask=mask).sum().backward()
    assert np.isfinite(qg.grad.numpy()).all() and not qg.grad.numpy()[0, 0, :3].any()


def test_gradients_equal_the_same_attention_written_out_in_pytorch():
    """PyTorch's CPU flex_attention has no backward; the gradient here is checked against
    softmax(where(mask, score_mod(q k^T s), -inf)) v in PyTorch's own ops."""
    (q, tq), (k, tk), (v, tv) = _pair(2, 2, 7, 4), _pair(2, 2, 7, 4), _pair(2, 2, 7, 3)
    bias, tbias = _pair(2)
    for t in (q, k, v, bias, tq, tk, tv, tbias):
        t.requires_grad_()
    mask = fa.create_block_mask(_window, 2, 2, 7, 7, device="cpu", BLOCK_SIZE=4)
    out = fa.flex_attention(q, k, v, score_mod=SCORE_MODS["alibi"](dt, bias), block_mask=mask)
    (out * out).sum().backward()
    i, j = torch.arange(7).view(7, 1), torch.arange(7).view(1, 7)
    h = torch.arange(2).view(1, 2, 1, 1)
    s = (tq @ tk.transpose(-2, -1)) / 2.0 - tbias[h] * (i - j).abs()
    s = torch.where((i - j).abs() <= 3, s, float("-inf"))
    tout = torch.softmax(s, -1) @ tv
    (tout * tout).sum().backward()
    for a, b in ((q, tq), (k, tk), (v, tv), (bias, tbias)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["heads", "gqa_ratio", "dims", "batch", "batch_mask",
                                  "longer", "shorter", "both_lse"])
def test_bad_arguments_get_pytorchs_errors(case):
    def call(m, mod):
        q = m.zeros(2, 4, 8, 4)
        k = m.zeros(2, 2 if case != "gqa_ratio" else 3, 8, 4)
        small = mod.create_block_mask(_causal, 2, 1, 4, 4, device="cpu", BLOCK_SIZE=2)
        big = mod.create_block_mask(_causal, 2, 1, 16, 16, device="cpu", BLOCK_SIZE=2)
        one = mod.create_block_mask(_causal, 3, 1, 8, 8, device="cpu", BLOCK_SIZE=2)
        return {"heads": lambda: mod.flex_attention(q, k, k),
                "gqa_ratio": lambda: mod.flex_attention(q, k, k, enable_gqa=True),
                "dims": lambda: mod.flex_attention(q[0], q[0], q[0]),
                "batch": lambda: mod.flex_attention(q, q[:1], q[:1]),
                "batch_mask": lambda: mod.flex_attention(q, q[:1], q[:1], block_mask=one),
                "longer": lambda: mod.flex_attention(q, q, q, block_mask=small),
                "shorter": lambda: mod.flex_attention(q, q, q, block_mask=big),
                "both_lse": lambda: mod.flex_attention(q, q, q, return_lse=True,
                                                       return_aux=mod.AuxRequest(lse=True))}[case]()
    assert _message(lambda: call(dt, fa)) == _message(lambda: call(torch, tfa))


def test_return_lse_is_deprecated_with_pytorchs_warning():
    q = dt.zeros(1, 1, 2, 2)
    fa._warned.discard("deprecated_return_lse")
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        out, lse = fa.flex_attention(q, q, q, return_lse=True)
    assert lse.shape == (1, 1, 2)


# -- block masks ---------------------------------------------------------------------------

_TABLES = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
           "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")


def _same_tables(ours, theirs):
    for name in _TABLES:
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1] and \
                a.tolist() == b.tolist(), name
    assert ours.shape == theirs.shape and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
    assert ours.sparsity() == pytest.approx(theirs.sparsity())
    assert ours.to_dense().tolist() == theirs.to_dense().tolist()
    assert ours.numel() == theirs.numel()
    assert repr(ours).replace("dispatchtorch.", "torch.") == repr(theirs)


@pytest.mark.parametrize("mask", sorted(_masks()))
@pytest.mark.parametrize("sizes", [(2, None, 300, 260, 128), (None, 2, 9, 11, 4),
                                   (2, 3, 16, 16, (8, 4))])
def test_create_block_mask_tables_as_pytorch(mask, sizes):
    *dims, block = sizes
    ours = fa.create_block_mask(_mask_of(mask, fa), *dims, device="cpu", BLOCK_SIZE=block)
    theirs = tfa.create_block_mask(_mask_of(mask, tfa), *dims, device="cpu", BLOCK_SIZE=block)
    _same_tables(ours, theirs)


def test_from_kv_blocks_and_adjust_as_pytorch():
    counts = np.array([[[1, 2, 0]]], np.int32)
    indices = np.array([[[[0, 1, 2], [2, 0, 1], [0, 1, 2]]]], np.int32)
    full = np.array([[[1, 0, 1]]], np.int32)
    ours = fa.BlockMask.from_kv_blocks(dt.tensor(counts), dt.tensor(indices), dt.tensor(full),
                                       dt.tensor(indices), BLOCK_SIZE=2)
    theirs = tfa.BlockMask.from_kv_blocks(torch.tensor(counts), torch.tensor(indices),
                                          torch.tensor(full), torch.tensor(indices), BLOCK_SIZE=2)
    _same_tables(ours, theirs)
    _same_tables(ours._adjust(3, 5), theirs._adjust(3, 5))
    q = dt.tensor(rng.standard_normal((1, 1, 6, 4)).astype(np.float32))
    np.testing.assert_allclose(fa.flex_attention(q, q, q, block_mask=ours).numpy(),
                               tfa.flex_attention(torch.tensor(q.numpy()), torch.tensor(q.numpy()),
                                                  torch.tensor(q.numpy()),
                                                  block_mask=theirs).numpy(), rtol=1e-5, atol=1e-6)


def test_create_mask_and_combinators_as_pytorch():
    for name in sorted(_masks()):
        assert fa.create_mask(_mask_of(name, fa), 2, 1, 5, 6, device="cpu").tolist() == \
            tfa.create_mask(_mask_of(name, tfa), 2, 1, 5, 6, device="cpu").tolist()
    def score(s, b, h, q, kv):
        return dt.where(q >= kv, s, float("-inf")) if isinstance(s, dt.Tensor) else \
            torch.where(q >= kv, s, float("-inf"))
    ours = fa.create_mask(score, 1, 1, 3, 4, device="cpu")
    theirs = tfa.create_mask(score, 1, 1, 3, 4, device="cpu")
    assert ours.tolist() == theirs.tolist()
    assert _message(lambda: fa.and_masks(_causal, 3)) == _message(lambda: tfa.and_masks(_causal, 3))
