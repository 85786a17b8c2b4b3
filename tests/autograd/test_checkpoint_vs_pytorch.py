"""torch.utils.checkpoint against PyTorch 2.13: the same outputs and gradients (dropout
inside draws the same mask in the recomputation), both variants' rules and errors."""
import warnings

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _pair():
    """The same small network in both libraries (PyTorch's weights copied)."""
    def build(tl):
        tl.manual_seed(0)
        return tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.GELU(), tl.nn.Dropout(0.3),
                                tl.nn.Linear(8, 8), tl.nn.Tanh(), tl.nn.Linear(8, 2))
    theirs, ours = build(torch), build(dt)
    ours.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def _grads(m):
    return [p.grad.numpy().copy() if p.grad is not None else None for p in m.parameters()]


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("how", ["sequential", "function"])
def test_values_and_gradients_equal_pytorchs(reentrant, how):
    ours, theirs = _pair()
    got = []
    for tl, m, ck, seq in ((dt, ours, checkpoint, checkpoint_sequential),
                           (torch, theirs, torch.utils.checkpoint.checkpoint,
                            torch.utils.checkpoint.checkpoint_sequential)):
        x = tl.tensor(X, requires_grad=True)
        tl.manual_seed(3)
        if how == "sequential":
            y = seq(m, 2, x, use_reentrant=reentrant)
        else:
            y = ck(lambda a: m(a) * 2, x, use_reentrant=reentrant)
        y.square().sum().backward()
        got.append((y.detach().numpy(), x.grad.numpy(), _grads(m)))
    (yo, xo, po), (yt, xt, pt) = got
    np.testing.assert_allclose(yo, yt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xo, xt, rtol=1e-5, atol=1e-6)
    for a, b in zip(po, pt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_the_forward_keeps_no_intermediates():
    """The output's node leads straight to the input and the parameters: nothing of
    the segment's own graph was recorded."""
    ours, _ = _pair()
    x = dt.tensor(X, requires_grad=True)
    y = checkpoint(ours, x, use_reentrant=False)
    edges = [e[0] for e in y.grad_fn.next if e is not None]
    params = list(ours.parameters())
    assert len(edges) == 1 + len(params)
    assert all(any(e is t for t in [x, *params]) for e in edges)


def test_non_reentrant_reaches_parameters_without_an_input_requiring_grad():
    """Inputs without requires_grad: PyTorch's non-reentrant variant still trains the
    parameters, the reentrant one warns and gives them None, both here as there."""
    for reentrant in (False, True):
        grads = []
        for tl, m, ck in ((dt, _pair()[0], checkpoint),
                          (torch, _pair()[1], torch.utils.checkpoint.checkpoint)):
            m.eval()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                y = ck(m, tl.tensor(X), use_reentrant=reentrant)
            if reentrant:
                assert any("None of the inputs have requires_grad=True" in str(i.message) for i in w)
                assert not y.requires_grad
            else:
                y.sum().backward()
            grads.append(_grads(m))
        for a, b in zip(*grads):
            if b is None:
                assert a is None
            else:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_autograd_grad_through_each_variant():
    ours, _ = _pair()
    ours.eval()
    x = dt.tensor(X, requires_grad=True)
    y = checkpoint(ours, x, use_reentrant=False)
    (gx,) = dt.autograd.grad(y.sum(), [x])
    x2 = dt.tensor(X, requires_grad=True)
    (want,) = dt.autograd.grad(ours(x2).sum(), [x2])
    np.testing.assert_allclose(gx.numpy(), want.numpy(), rtol=1e-6)
    y = checkpoint(ours, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        dt.autograd.grad(y.sum(), [x])


def test_arguments_and_their_errors_as_pytorchs():
    ours, _ = _pair()
    x = dt.tensor(X, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(ours, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: ours(a) * scale, x, scale=2.0, use_reentrant=True)
    y = checkpoint(lambda a, scale: ours(a) * scale, x, scale=2.0, use_reentrant=False)
    y.sum().backward()


def test_context_fn_wraps_the_forward_and_the_recomputation_as_pytorchs():
    import contextlib
    seen = []
    for lib, ckpt in ((torch, torch.utils.checkpoint.checkpoint), (dt, checkpoint)):
        log = []

        def context_fn():
            @contextlib.contextmanager
            def phase(name):
                log.append(f"enter {name}")
                yield
                log.append(f"exit {name}")
            return phase("forward"), phase("recompute")

        def f(a):
            log.append("run")
            return (a * 2).sin()
        x = lib.ones(3, requires_grad=True)
        y = ckpt(f, x, use_reentrant=False, context_fn=context_fn)
        log.append("backward")
        y.sum().backward()
        seen.append((log, x.grad.numpy().tolist()))
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-6)
    # PyTorch leaves its recompute context when its early stop is collected; here at once
    assert seen[0][0] == seen[1][0][:6] == ["enter forward", "run", "exit forward", "backward",
                                            "enter recompute", "run"]
    assert seen[1][0][6:] == ["exit recompute"]


def test_a_recomputation_of_another_shape_is_a_checkpoint_error():
    from dispatchtorch.utils.checkpoint import CheckpointError
    for lib, ckpt, error in ((torch, torch.utils.checkpoint.checkpoint,
                              torch.utils.checkpoint.CheckpointError),
                             (dt, checkpoint, CheckpointError)):
        calls = []

        def f(a):
            calls.append(1)
            return a[:len(calls) + 1].sin()      # one entry more on the recomputation
        x = lib.ones(4, requires_grad=True)
        with pytest.raises(error):
            ckpt(f, x, use_reentrant=False).sum().backward()
        assert issubclass(error, RuntimeError)
    calls.clear()
    x = dt.ones(4, requires_grad=True)
    with pytest.raises(Exception) as e:    # unchecked: the shapes meet in the engine instead
        checkpoint(f, x, use_reentrant=False, determinism_check="none").sum().backward()
    assert not isinstance(e.value, CheckpointError)


def test_small_helpers_as_pytorchs():
    from dispatchtorch.utils import checkpoint as ours
    theirs = torch.utils.checkpoint
    for lib, mod in ((torch, theirs), (dt, ours)):
        a, b = lib.ones(2, requires_grad=True), lib.zeros(2)
        out = mod.detach_variable((a, b, 3))
        assert [t.requires_grad for t in out[:2]] == [True, False] and out[2] == 3
        assert out[0] is not a and out[0].grad_fn is None
        with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got "
                                               "Unsupported input type: list"):
            mod.detach_variable([a])
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            mod.check_backward_validity([b, 1])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mod.check_backward_validity([a])
        found = lib.accelerator.current_accelerator(True)
        assert mod.DefaultDeviceType.get_device_type() == (found.type if found else "cpu")
        try:
            mod.DefaultDeviceType.set_device_type("meta")
            assert mod.DefaultDeviceType.get_device_type() == "meta"
            mod.DefaultDeviceType.set_device_type()
            assert mod.DefaultDeviceType.get_device_type() == "cuda"
        finally:
            mod.DefaultDeviceType._default_device_type = None
        with mod.set_checkpoint_early_stop(False), mod.set_checkpoint_debug_enabled(True):
            x = lib.ones(3, requires_grad=True)
            mod.checkpoint(lambda t: t.exp(), x, use_reentrant=False).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.exp(np.ones(3)), rtol=1e-6)


def test_a_tensor_the_walk_cannot_see_is_an_error_not_a_lost_gradient():
    w = dt.randn(4, requires_grad=True)
    hidden = {"w": w}
    y = checkpoint(lambda a: (a * hidden["w"]).sum(), dt.tensor(X, requires_grad=True),
                   use_reentrant=False)
    with pytest.raises(RuntimeError, match="neither an argument nor a parameter"):
        y.backward()
    named = w
    y = checkpoint(lambda a: (a * named).sum(), dt.tensor(X, requires_grad=True),
                   use_reentrant=False)
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), X.sum(0), rtol=1e-6)
