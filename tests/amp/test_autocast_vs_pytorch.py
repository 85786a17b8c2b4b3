"""Autocast on CPU (bfloat16) against PyTorch's: each op's output dtype under PyTorch's
policy and its values; nesting, the decorator, per-thread state, the deprecated
spellings; GradScaler's scaling, inf/nan skipped steps and scale updates."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4)).astype(np.float32)
W = rng.standard_normal((3, 4)).astype(np.float32)
IMG = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
K = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
T = np.array([0, 1, 2, 3])


def _cases(lib):
    F = lib.nn.functional
    a, w, img, k, t = (lib.tensor(v) for v in (A, W, IMG, K, T))
    b = a.to(lib.bfloat16)
    return {
        "matmul": lambda: lib.matmul(a, a), "@": lambda: a @ a, "mm": lambda: lib.mm(a, a),
        "bmm": lambda: lib.bmm(a[None], a[None]), "addmm": lambda: lib.addmm(a, a, a),
        "baddbmm": lambda: lib.baddbmm(a[None], a[None], a[None]),
        "Tensor.matmul": lambda: a.matmul(a), "linear": lambda: F.linear(a, w),
        "linear-bias": lambda: F.linear(a, w, lib.tensor(W[:, 0])),
        "einsum": lambda: lib.einsum("ij,jk->ik", a, a), "conv2d": lambda: F.conv2d(img, k),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, k),
        "sdpa": lambda: F.scaled_dot_product_attention(a[None], a[None], a[None]),
        "mv (cpu: as is)": lambda: lib.mv(a, a[0]), "softmax": lambda: F.softmax(a, -1),
        "softmax-bf16": lambda: F.softmax(b, -1), "exp-bf16": lambda: lib.exp(b),
        "sum-bf16": lambda: b.sum(), "layer_norm": lambda: F.layer_norm(a, (4,)),
        "relu-bf16": lambda: lib.relu(b), "cross_entropy-bf16": lambda: F.cross_entropy(b, t),
        "mse_loss-bf16": lambda: F.mse_loss(b, a), "l1_loss-bf16": lambda: F.l1_loss(b, b),
        "nll_loss-bf16": lambda: F.nll_loss(b, t),
        "bce_logits-bf16": lambda: F.binary_cross_entropy_with_logits(b, b.sigmoid()),
        "smooth_l1-bf16": lambda: F.smooth_l1_loss(b, b), "prod-bf16": lambda: lib.prod(b),
        "cat-mixed": lambda: lib.cat([b, a]), "add-mixed": lambda: b + a,
        "f64 stays": lambda: lib.matmul(a.double(), a.double()),
        "linear-in-linear": lambda: F.linear(F.linear(a, w).float(), lib.tensor(W[:, :3])),
    }


@pytest.mark.parametrize("name", list(_cases(dt)))
def test_op_dtype_and_values_match_pytorch_autocast(name):
    with dt.autocast("cpu", dtype=dt.bfloat16):
        ours = _cases(dt)[name]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        theirs = _cases(torch)[name]()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    # bfloat16 has 8 significant bits: summation order may move a result by one unit
    tol = 1e-2 if theirs.dtype == torch.bfloat16 else 1e-5
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=tol, atol=tol)


def test_gradients_flow_back_in_float32_like_pytorch():
    grads = []
    for lib in (dt, torch):
        w = lib.tensor(W, requires_grad=True)
        with lib.autocast("cpu"):
            loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(lib.tensor(A), w)
                                                   .t(), lib.tensor([0, 1, 2]))
        loss.backward()
        assert w.grad.dtype == lib.float32
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-2, atol=1e-3)


def test_state_nesting_decorator_and_threads():
    assert not dt.is_autocast_enabled("cpu")
    with dt.autocast("cpu"):
        assert dt.is_autocast_enabled("cpu") and dt.get_autocast_dtype("cpu") is dt.bfloat16
        with dt.autocast("cpu", enabled=False):
            assert (dt.tensor(A) @ dt.tensor(A)).dtype is dt.float32
        with dt.amp.autocast("cpu", dtype=dt.float16):
            assert (dt.tensor(A) @ dt.tensor(A)).dtype is dt.float16
        seen = []
        th = threading.Thread(target=lambda: seen.append(
            (dt.is_autocast_enabled("cpu"), (dt.tensor(A) @ dt.tensor(A)).dtype)))
        th.start()
        th.join()
        assert seen == [(False, dt.float32)]           # another thread: autocast is off
        assert (dt.tensor(A) @ dt.tensor(A)).dtype is dt.bfloat16
    assert not dt.is_autocast_enabled("cpu")

    @dt.autocast("cpu")
    def f(x):
        return x @ x
    assert f(dt.tensor(A)).dtype is dt.bfloat16 and (dt.tensor(A) @ dt.tensor(A)).dtype is dt.float32
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
        ctx = dt.cpu.amp.autocast()
    with ctx:
        assert (dt.tensor(A) @ dt.tensor(A)).dtype is dt.bfloat16
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'nonsense'"):
        dt.autocast("nonsense")


def test_weight_casts_are_cached_within_a_region():
    w = dt.tensor(W, requires_grad=True)
    with dt.autocast("cpu"):
        a = dt.nn.functional.linear(dt.tensor(A), w)
        from dispatchtorch.amp._state import STATE
        assert len(STATE.cache) == 1
        b = dt.nn.functional.linear(dt.tensor(A), w)
        assert len(STATE.cache) == 1
    assert len(STATE.cache) == 0 and a.dtype is b.dtype is dt.bfloat16


def _scaler_run(lib, steps=6, inf_at=(2,)):
    lin = lib.nn.Linear(4, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W))
        lin.bias.zero_()
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    out = []
    for k in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu"):
            loss = lib.nn.functional.mse_loss(lin(lib.tensor(A)), lib.zeros(4, 3))
        scaler.scale(loss).backward()
        if k in inf_at:
            lin.weight.grad[0, 0] = float("inf") if k % 2 == 0 else float("nan")
        scaler.step(opt)
        scaler.update()
        out.append((scaler.get_scale(), lin.weight.detach().float().numpy().copy()))
    return out, scaler.state_dict()


def test_grad_scaler_matches_pytorch_with_skipped_steps():
    ours, ours_sd = _scaler_run(dt, inf_at=(2, 3))
    theirs, theirs_sd = _scaler_run(torch, inf_at=(2, 3))
    assert [s for s, _ in ours] == [s for s, _ in theirs] == [8.0, 16.0, 8.0, 4.0, 4.0, 8.0]
    for (_, a), (_, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-3)
    np.testing.assert_array_equal(ours[2][1], ours[1][1])           # the inf step: skipped
    assert ours_sd == theirs_sd


def test_grad_scaler_errors_and_disabled_forms():
    opt = dt.optim.SGD([dt.nn.Parameter(dt.zeros(2))], lr=0.1)
    s = dt.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        s.step(opt)
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        off = dt.cuda.amp.GradScaler() if not dt.cuda.is_available() else None
    if off is not None:
        x = dt.ones(2)
        assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}
    from dispatchtorch.cuda.amp import GradScaler  # the module path PyTorch programs import
    assert GradScaler is dt.cuda.amp.GradScaler


def test_nothing_is_wrapped_until_a_program_enters_autocast():
    """The op path is untouched for programs that never use autocast."""
    import subprocess
    import sys
    code = ("import dispatchtorch as t\n"
            "assert t.matmul.__name__ == 'matmul' and t.Tensor.__matmul__.__name__ != 'autocast_op'\n"
            "with t.autocast('cpu', enabled=False):\n    pass\n"
            "assert t.matmul.__name__ == 'matmul'\n"
            "with t.autocast('cpu'):\n    pass\n"
            "assert t.matmul.__wrapped__ is t.ops.matmul.__wrapped__\n"
            "assert t.nn.functional.linear.__name__ == 'linear' and t.matmul.__name__ == 'matmul'\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_modules_follow_the_policy_like_pytorch():
    """nn modules reach the listed functions (nn.Linear -> F.linear), so their outputs
    take the policy's dtype as in PyTorch."""
    for lib in (dt, torch):
        x = lib.tensor(IMG)
        with lib.autocast("cpu"):
            conv = lib.nn.Conv2d(2, 3, 3)(x)
            lin = lib.nn.Linear(5, 4)(x)
            norm = lib.nn.LayerNorm(5)(x)
            loss = lib.nn.MSELoss()(lin, lib.zeros(1, 2, 5, 4).to(lib.bfloat16))
        got = [str(t.dtype).split(".")[-1] for t in (conv, lin, norm, loss)]
        assert got == ["bfloat16", "bfloat16", "float32", "float32"], (lib.__name__, got)
