"""Selective activation checkpointing (create_selective_checkpoint_contexts, CheckpointPolicy)
against PyTorch 2.13 and the unchecked run: the same outputs and gradients, saved ops not
run again in the backward (kernel launches counted here, ATen calls counted in PyTorch),
the policy's arguments, and PyTorch's refusals."""
import contextlib
import functools

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.dispatch import OPS
from dispatchtorch.utils import checkpoint as dck

torch = pytest.importorskip("torch")
from torch.utils import checkpoint as tck  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((5, 5)).astype(np.float32)


def _policy(tl, saved, seen=None):
    def policy(ctx, op, *args, **kwargs):
        if seen is not None:
            seen.append(op)
        save = op in {getattr(tl.ops.aten, n).default for n in saved}
        return tl.utils.checkpoint.CheckpointPolicy.MUST_SAVE if save else \
            tl.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
    return policy


def _run(tl, fn, policy, arrays=(A, B)):
    """Outputs and gradients of fn checkpointed with the policy (None: not checkpointed)."""
    xs = [tl.tensor(a, requires_grad=True) for a in arrays]
    if policy is None:
        out = fn(tl, *xs)
    else:
        ctx_fn = functools.partial(tl.utils.checkpoint.create_selective_checkpoint_contexts,
                                   policy)
        out = tl.utils.checkpoint.checkpoint(functools.partial(fn, tl), *xs,
                                             use_reentrant=False, context_fn=ctx_fn)
    out.sum().backward()
    return out.detach().numpy(), [x.grad.numpy() for x in xs]


def _two_mm(tl, x, y):
    return tl.sigmoid(tl.mm(tl.mm(x, y), y)) * y.sum()


@contextlib.contextmanager
def _count_ours(row):
    """Counts the cpu kernel launches of a row while the block runs."""
    op = OPS[row]
    getattr(dt, row)(dt.ones(2, 2)) if row != "matmul" else dt.ones(2, 2) @ dt.ones(2, 2)
    inner = op.kernels["cpu"]
    calls = []

    def counting(*a, **k):
        calls.append(1)
        return inner(*a, **k)
    op.kernels["cpu"] = counting
    try:
        yield calls
    finally:
        op.kernels["cpu"] = inner


class _CountTheirs(TorchDispatchMode):
    def __init__(self, packet):
        super().__init__()
        self.packet, self.calls = packet, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket is self.packet:
            self.calls += 1
        return func(*args, **(kwargs or {}))


def _backward_launches_ours(fn, saved, row):
    xs = [dt.tensor(a, requires_grad=True) for a in (A, B)]
    ctx_fn = functools.partial(dck.create_selective_checkpoint_contexts, _policy(dt, saved))
    with _count_ours(row) as calls:
        out = dck.checkpoint(functools.partial(fn, dt), *xs, use_reentrant=False,
                             context_fn=ctx_fn)
        forward = len(calls)
        out.sum().backward()
    return forward, len(calls) - forward


def _backward_launches_theirs(fn, saved, packet):
    xs = [torch.tensor(a, requires_grad=True) for a in (A, B)]
    ctx_fn = functools.partial(tck.create_selective_checkpoint_contexts, _policy(torch, saved))
    out = tck.checkpoint(functools.partial(fn, torch), *xs, use_reentrant=False,
                         context_fn=ctx_fn)
    with _CountTheirs(packet) as mode:
        out.sum().backward()
    return mode.calls


@pytest.mark.parametrize("saved", [(), ("mm",), ("sigmoid", "mm"), ("mul", "sigmoid", "mm")])
def test_values_and_gradients_equal_the_unchecked_run_and_pytorch(saved):
    plain_out, plain_grads = _run(dt, _two_mm, None)
    out, grads = _run(dt, _two_mm, _policy(dt, saved))
    np.testing.assert_array_equal(out, plain_out)
    for g, p in zip(grads, plain_grads):
        np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)
    t_out, t_grads = _run(torch, _two_mm, _policy(torch, saved))
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    for g, t in zip(grads, t_grads):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_a_saved_mm_is_not_run_again():
    # our torch.mm is a composite over the matmul kernel: count that kernel's launches
    fwd, recompute_all = _backward_launches_ours(_two_mm, (), "matmul")
    _, save_mm = _backward_launches_ours(_two_mm, ("mm",), "matmul")
    assert fwd == 2
    assert recompute_all - save_mm == 2          # the two forward mms are not run again
    t_all = _backward_launches_theirs(_two_mm, (), torch.ops.aten.mm)
    t_save = _backward_launches_theirs(_two_mm, ("mm",), torch.ops.aten.mm)
    assert t_all - t_save == 2
    assert save_mm == t_save                      # the backward's own mms: 2 per mm


def _sin_tanh(tl, x, y):
    return tl.tanh(tl.sin(x @ y)) * 2


@pytest.mark.parametrize("saved,expected", [((), 1), (("sin",), 0), (("tanh", "sin"), 0)])
def test_a_saved_kernel_is_not_run_again(saved, expected):
    # sin's derivative is cos, so any sin launch in the backward is a recomputation
    assert _backward_launches_ours(_sin_tanh, saved, "sin")[1] == expected
    assert _backward_launches_theirs(_sin_tanh, saved, torch.ops.aten.sin) == expected
    out, grads = _run(dt, _sin_tanh, _policy(dt, saved))
    p_out, p_grads = _run(dt, _sin_tanh, None)
    np.testing.assert_array_equal(out, p_out)
    for g, p in zip(grads, p_grads):
        np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)


def test_the_list_form_and_bool_answers():
    list_fn = functools.partial(dck.create_selective_checkpoint_contexts,
                                [dt.ops.aten.mm.default])
    xs = [dt.tensor(a, requires_grad=True) for a in (A, B)]
    with _count_ours("matmul") as calls:
        out = dck.checkpoint(functools.partial(_two_mm, dt), *xs, use_reentrant=False,
                             context_fn=list_fn)
        out.sum().backward()
    assert len(calls) == 2 + 4                       # forward 2, the backward's own 4
    p_out, p_grads = _run(dt, _two_mm, None)
    np.testing.assert_array_equal(out.detach().numpy(), p_out)
    np.testing.assert_allclose(xs[0].grad.numpy(), p_grads[0], rtol=1e-6, atol=1e-6)

    def bool_policy(ctx, op, *args, **kwargs):
        return op == dt.ops.aten.sin.default
    xs = [dt.tensor(a, requires_grad=True) for a in (A, B)]
    with _count_ours("sin") as calls:
        out = dck.checkpoint(functools.partial(_sin_tanh, dt), *xs, use_reentrant=False,
                             context_fn=functools.partial(
                                 dck.create_selective_checkpoint_contexts, bool_policy))
        out.sum().backward()
    assert len(calls) == 1                           # True means MUST_SAVE


def test_what_the_policy_receives():
    got = []

    def policy(ctx, op, *args, **kwargs):
        got.append((op, ctx.is_recompute, ctx.op_output, args))
        return dck.CheckpointPolicy.PREFER_RECOMPUTE
    x = dt.tensor(A, requires_grad=True)
    y = dt.tensor(B, requires_grad=True)
    out = dck.checkpoint(lambda a, b: dt.sin(dt.mm(a, b)), x, y, use_reentrant=False,
                         context_fn=functools.partial(dck.create_selective_checkpoint_contexts,
                                                      policy))
    out.sum().backward()                  # the policy is asked in the forward only
    ops = [g[0] for g in got]
    assert ops == [dt.ops.aten.matmul.default, dt.ops.aten.mm.default, dt.ops.aten.sin.default]
    assert all(g[1] is False for g in got)
    expected_mm = A.astype(np.float64) @ B
    np.testing.assert_allclose(got[0][2].numpy(), expected_mm, rtol=1e-5)   # kernel: a copy
    np.testing.assert_allclose(got[1][2].numpy(), expected_mm, rtol=1e-5)   # composite
    np.testing.assert_allclose(got[2][2].numpy(), np.sin(expected_mm), rtol=1e-4, atol=1e-6)
    assert got[0][3] == () and len(got[1][3]) == 2 and got[1][3][0] is not None


def test_dropout_saved_or_recomputed_draws_the_same_mask():
    def fn(tl, x, y):
        return tl.nn.functional.dropout(x @ y, 0.5, training=True).sin()
    for saved in ((), ("dropout",), ("matmul", "dropout")):
        dt.manual_seed(3)
        plain_out, plain_grads = _run(dt, fn, None)
        dt.manual_seed(3)
        out, grads = _run(dt, fn, _policy(dt, saved))
        np.testing.assert_array_equal(out, plain_out)
        for g, p in zip(grads, plain_grads):
            np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)


def test_an_in_place_change_after_saving_keeps_gradients_right():
    # PyTorch raises ("cached ... has been mutated"); here the saved output is a copy
    def fn(tl, x, y):
        z = tl.mm(x, y)
        z.mul_(2)
        return (z.sin() + z).sum(0)
    plain_out, plain_grads = _run(dt, fn, None)
    out, grads = _run(dt, fn, _policy(dt, ("mm", "sin")))
    np.testing.assert_array_equal(out, plain_out)
    for g, p in zip(grads, plain_grads):
        np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)


def test_modules_inside():
    def build(tl):
        tl.manual_seed(0)
        return tl.nn.Sequential(tl.nn.Linear(5, 6), tl.nn.ReLU(), tl.nn.Linear(6, 3))
    theirs = build(torch)
    ours = build(dt)
    ours.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    ctx_ours = functools.partial(dck.create_selective_checkpoint_contexts,
                                 [dt.ops.aten.linear.default, dt.ops.aten.addmm.default])
    ctx_theirs = functools.partial(tck.create_selective_checkpoint_contexts,
                                   [torch.ops.aten.addmm.default])
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    o = dck.checkpoint(ours, dt.tensor(x), use_reentrant=False, context_fn=ctx_ours)
    t = tck.checkpoint(theirs, torch.tensor(x), use_reentrant=False, context_fn=ctx_theirs)
    o.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_second_backward_is_refused_as_in_pytorch():
    def run(tl):
        xs = [tl.tensor(a, requires_grad=True) for a in (A, B)]
        ctx_fn = functools.partial(tl.utils.checkpoint.create_selective_checkpoint_contexts,
                                   _policy(tl, ("mm",)))
        out = tl.utils.checkpoint.checkpoint(functools.partial(_two_mm, tl), *xs,
                                             use_reentrant=False, context_fn=ctx_fn)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
    for tl in (dt, torch):
        with pytest.raises(RuntimeError, match="Trying to backward an extra time"):
            run(tl)


def test_refusals():
    for tl, m in ((dt, dck), (torch, tck)):
        with pytest.raises(ValueError, match="change it to `torch.ops.aten.mm.default`"):
            m.create_selective_checkpoint_contexts([tl.ops.aten.mm])
        with pytest.raises(TypeError, match="must be either a function or a list of ops"):
            m.create_selective_checkpoint_contexts(3)

    def offload(ctx, op, *args, **kwargs):
        return dck.CheckpointPolicy.MUST_CPU_OFFLOAD
    x = dt.tensor(A, requires_grad=True)
    with pytest.raises(NotImplementedError, match="MUST_CPU_OFFLOAD"):
        dck.checkpoint(dt.sin, x, use_reentrant=False,
                       context_fn=functools.partial(dck.create_selective_checkpoint_contexts,
                                                    offload))


def test_no_wrapper_is_left_after_the_region():
    op = OPS["sin"]
    dt.sin(dt.ones(1))
    before = op.kernels["cpu"]
    out, _ = _run(dt, _sin_tanh, _policy(dt, ("sin",)))
    assert op.kernels["cpu"] is before and not hasattr(OPS["mm"].decomp, "_dt_sac")


def test_policy_enum_matches_pytorch():
    assert [(p.name, p.value) for p in dck.CheckpointPolicy] == \
        [(p.name, p.value) for p in tck.CheckpointPolicy]


def test_under_the_profiler_saved_kernels_are_not_launched_again():
    xs = [dt.tensor(a, requires_grad=True) for a in (A, B)]
    ctx_fn = functools.partial(dck.create_selective_checkpoint_contexts, _policy(dt, ("sin",)))
    with dt.profiler.profile() as prof:
        out = dck.checkpoint(functools.partial(_sin_tanh, dt), *xs, use_reentrant=False,
                             context_fn=ctx_fn)
        out.sum().backward()
    names = [e.name for e in prof.events()]
    assert names.count("aten::sin") == 1 and names.count("aten::tanh") == 2
    p_out, p_grads = _run(dt, _sin_tanh, None)
    np.testing.assert_allclose(xs[0].grad.numpy(), p_grads[0], rtol=1e-6, atol=1e-6)
