"""compile(dynamic=...): one capture serves every size its guards accept (True), the
dims that changed become dynamic on the second capture (None), every shape is its own
capture (False); guards on rank, dtype, size-1 broadcasting and the relations the
graph relied on re-capture; values and gradients equal eager's at every size."""
import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F
from tests.compile.compile_helpers import DEVICES, _close, _np


def chain(x, y):
    return (torch.exp(x * y + 1.0) * x).sum(1) / x.shape[1] + x.mean()


@pytest.mark.parametrize("dynamic, captures", [(True, 1), (None, 2), (False, 3)])
def test_three_batch_sizes_capture_as_often_as_pytorch(dynamic, captures):
    cf = torch.compile(chain, dynamic=dynamic)
    for b, n in [(3, 5), (4, 7), (6, 5), (4, 7), (3, 5)]:
        x, y = torch.randn(b, n), torch.randn(b, n)
        got = cf(x, y)
        assert got.shape == (b,)
        _close(got, chain(x, y), "cpu")
    assert cf.n_captures == captures


@pytest.mark.parametrize("dev", DEVICES)
def test_mlp_training_gradients_equal_eagers_at_every_batch_size(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 9), torch.nn.ReLU(),
                                torch.nn.Linear(9, 4)).to(dev)
    cm = torch.compile(model, dynamic=True)
    for b in (3, 5, 7, 5):
        x = torch.randn(b, 6, device=dev)
        y = torch.randint(0, 4, (b,), device=dev)
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
        want = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        loss = F.cross_entropy(cm(x), y)
        loss.backward()
        _close(loss, F.cross_entropy(model(x), y), dev, 10)
        for p, g in zip(model.parameters(), want):
            _close(p.grad, g, dev, 10)
    assert cm._compiled.n_captures == 1


def test_a_tiny_causal_transformer_over_sequence_lengths_captures_once():
    torch.manual_seed(0)

    class Attn(torch.nn.Module):
        def __init__(self, d=8, block=16):
            super().__init__()
            self.tok = torch.nn.Embedding(13, d)
            self.pos = torch.nn.Embedding(block, d)
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.ln = torch.nn.LayerNorm(d)
            self.head = torch.nn.Linear(d, 13)
            self.register_buffer("mask", torch.tril(torch.ones(block, block)).bool())

        def forward(self, idx, targets):
            B, T = idx.shape
            h = self.tok(idx) + self.pos(torch.arange(T))
            q, k, v = self.qkv(self.ln(h)).split(8, dim=2)
            att = (q @ k.transpose(1, 2)) * (1.0 / 8 ** 0.5)
            att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(-1)
            logits = self.head(h + att @ v)
            return F.cross_entropy(logits.view(B * T, -1), targets.view(-1))

    model = Attn()
    cm = torch.compile(model, dynamic=True)
    for T in (5, 7, 9):       # (3 * 11 > 32 would take another path of the frontend)
        idx = torch.randint(0, 13, (3, T))
        tgt = torch.randint(0, 13, (3, T))
        model.zero_grad()
        want = model(idx, tgt)
        want.backward()
        wg = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        got = cm(idx, tgt)
        got.backward()
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6, atol=1e-6)
        for p, g in zip(model.parameters(), wg):
            np.testing.assert_allclose(_np(p.grad), _np(g), rtol=1e-5, atol=1e-6)
    assert cm._compiled.n_captures == 1


def test_rank_and_dtype_changes_capture_again():
    cf = torch.compile(lambda x: (x * 2.0).sum(-1), dynamic=True)
    for x in (torch.randn(3, 4), torch.randn(5, 6), torch.randn(2, 3, 4),
              torch.randn(3, 4, dtype=torch.float64)):
        _close(cf(x), (x * 2.0).sum(-1), "cpu")
    assert cf.n_captures == 3


def test_size_one_broadcasting_is_specialised_not_generalised():
    cf = torch.compile(lambda x, y: x + y, dynamic=True)
    for a, b in [((4, 3), (4, 3)), ((4, 3), (1, 3)), ((5, 3), (5, 3)), ((5, 6), (1, 6)),
                 ((5, 6), (5, 1))]:
        x, y = torch.randn(*a), torch.randn(*b)
        got = cf(x, y)
        assert got.shape == a
        _close(got, x + y, "cpu")
    assert cf.n_captures == 3          # equal shapes; y broadcast on dim 0; on dim 1


def test_a_relation_the_graph_relied_on_is_guarded():
    def f(x, y):                           # a size compared with another: Python control flow
        if x.shape[0] > y.shape[0]:
            return x[: y.shape[0]] * y
        return x * y[: x.shape[0]]
    cf = torch.compile(f, dynamic=True)
    for a, b in [(5, 3), (7, 4), (3, 6), (4, 8)]:
        x, y = torch.randn(a, 2), torch.randn(b, 2)
        got = cf(x, y)
        assert got.shape == (min(a, b), 2)
        _close(got, f(x, y), "cpu")
    assert cf.n_captures == 2              # one per branch


def test_a_size_used_as_a_float_is_pinned_to_its_value():
    def f(x):
        return x * float(x.shape[0])       # float(): leaves the int world
    cf = torch.compile(f, dynamic=True)
    for b in (3, 4, 3):
        x = torch.randn(b, 2)
        _close(cf(x), f(x), "cpu")
    assert cf.n_captures == 2
    assert "s[0] == 3" in cf.dynamic_entries[0].describe()


def test_a_size_lost_into_a_host_constant_is_pinned():
    import numpy
    def f(x):                              # numpy computes from the size: the SymInt is lost
        return x + torch.tensor(numpy.arange(x.shape[0] * 1.0).reshape(-1, 1).astype("float32"))
    cf = torch.compile(f, dynamic=True)
    for b in (3, 4, 4, 3):
        x = torch.randn(b, 2)
        _close(cf(x), f(x), "cpu")
    assert cf.n_captures == 2


def test_an_input_that_requires_grad_gets_eagers_gradient_at_every_size():
    def f(x, w):
        return (torch.tanh(x @ w) * x.shape[0]).sum()
    cf = torch.compile(f, dynamic=True)
    w = torch.randn(4, 3, requires_grad=True)
    for b in (2, 5, 6):
        x = torch.randn(b, 4, requires_grad=True)
        xe, we = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        f(xe, we).backward()
        w.grad = None
        cf(x, w).backward()
        _close(x.grad, xe.grad, "cpu", 1e5)
        _close(w.grad, we.grad, "cpu", 1e5)
    assert cf.n_captures == 1


def test_arange_over_a_symbolic_length_is_remade_at_each_size():
    def f(x):
        return x[::2] * torch.arange(0, x.shape[0], 2) + torch.arange(1, x.shape[0] + 1, 2)
    cf = torch.compile(f, dynamic=True)
    for n in (5, 6, 9, 12):
        x = torch.randn(n)
        got = cf(x)
        assert got.shape == ((n + 1) // 2,)
        _close(got, f(x), "cpu")
    assert cf.n_captures == 1


def test_automatic_dynamic_reports_why_it_captured_again():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh())
    cm = torch.compile(model)                       # dynamic=None
    for b in (2, 7, 4, 6):
        x = torch.randn(b, 5)
        _close(cm(x), model(x), "cpu")
    cf = cm._compiled
    assert cf.n_captures == 2 and cf.auto_dims == {"args[0]": (0,)}
    assert cf.recompiles == ["args[0]: float32[2, 5] cpu -> float32[7, 5] cpu"]
    for b in (3, 8):                  # 3: the Linear's width too; the graph made at 7 knows
        x = torch.randn(b, 5)         # which sizes are the batch's
        _close(cm(x), model(x), "cpu")
    assert cf.n_captures == 2


def test_a_size_captured_equal_to_a_static_width_is_pinned_then_generalised_at_the_next():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh())
    cm = torch.compile(model, dynamic=True)
    for b in (3, 4, 6, 3):            # captured at 3 = the width: the scan pins it
        x = torch.randn(b, 5)
        _close(cm(x), model(x), "cpu")
    cf = cm._compiled
    assert cf.n_captures == 2 and "failed guard(s) s[0] == 3" in cf.recompiles[0]
    assert "s[0]=args[0].size(0)" in cf.explain()


def test_a_python_loop_over_a_size_is_pinned_not_replayed_short():
    def f(x):                              # range() reads the size without asking it
        acc = x[0] * 0.0
        for t in range(x.shape[0]):
            acc = acc + x[t] * (t + 1.0)
        return acc
    cf = torch.compile(f, dynamic=True)
    for n in (3, 5, 3):
        x = torch.randn(n, 4)
        _close(cf(x), f(x), "cpu")
    assert cf.n_captures == 2


def test_the_tiny_transformer_training_with_dropout_over_lengths_equals_eager():
    from benchmarks import models
    torch.manual_seed(0)
    model = models.tiny_transformer(torch, d_model=16, nhead=2, layers=1, block=16)
    cm = torch.compile(model, dynamic=True)
    for T in (5, 7, 6):
        idx = torch.randint(0, 65, (3, T))
        grads = []
        for m in (model, cm):
            torch.manual_seed(T)                 # the same dropout masks in both
            model.zero_grad()
            out = m(idx)
            out.square().mean().backward()
            grads.append((out.detach().clone(), [p.grad.clone() for p in model.parameters()]))
        (o1, g1), (o2, g2) = grads
        np.testing.assert_allclose(_np(o2), _np(o1), rtol=1e-5, atol=1e-6)
        for a, b in zip(g2, g1):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)
    assert cm._compiled.n_captures == 1


def test_mark_dynamic_mark_static_and_a_violated_mark():
    def f(x):
        return torch.tanh(x) * 2.0
    cf = torch.compile(f)                          # dynamic=None: the mark counts at once
    for b in (3, 5, 6):
        x = torch.randn(b, 4)
        torch._dynamo.mark_dynamic(x, 0)
        _close(cf(x), f(x), "cpu")
    assert cf.n_captures == 1 and cf.dynamic_entries[0].dims == {"args[0]": (0,)}

    cf = torch.compile(f, dynamic=True)
    for b in (3, 5):
        x = torch.randn(4, b)
        torch._dynamo.mark_static(x, 1)            # dim 1 stays specialised
        _close(cf(x), f(x), "cpu")
    assert cf.n_captures == 2

    def g(x):
        return x * float(x.shape[0])               # pins dim 0
    x = torch.randn(3, 2)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    _close(torch.compile(g)(x), g(x), "cpu")       # maybe: no error
    x = torch.randn(3, 2)
    torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(torch._dynamo.exc.ConstraintViolationError, match=r"args\[0\].size\(\)\[0\]"):
        torch.compile(g)(x)
    with pytest.raises(IndexError, match="mark_dynamic"):
        torch._dynamo.mark_dynamic(x, 2)


def test_only_the_last_sizes_keep_their_programs_and_an_old_one_comes_back_uncaptured():
    from dispatchtorch._compile import compiled
    cf = torch.compile(lambda x: torch.exp(x) + 1.0, dynamic=True)
    for n in list(range(2, 2 + compiled._SIZES_KEPT + 4)) + [2]:
        x = torch.randn(n)
        _close(cf(x), torch.exp(x) + 1.0, "cpu")
    assert cf.n_captures == 1
    assert len(cf.cache) <= compiled._SIZES_KEPT + 1
    assert len(cf.dynamic_entries[0].entries) <= cf.dynamic_entries[0].limit



def test_a_python_loop_over_a_size_that_never_indexes_is_pinned_too():
    def f(x, w):                           # range() of a size: the loop is unrolled
        h = x
        for _ in range(x.shape[0]):
            h = torch.tanh(h @ w)
        return h
    cf = torch.compile(f, dynamic=True)
    w = torch.randn(3, 3)
    for n in (3, 4, 3):
        x = torch.randn(n, 3)
        _close(cf(x, w), f(x, w), "cpu")
    assert cf.n_captures == 2
    assert isinstance(range(2), range)     # (the capture's range is the builtin again)


def test_two_threads_capturing_dynamically_leave_the_swapped_names_as_they_were():
    # Each dynamic capture swaps torch.arange and builtins.range for its length. B starts
    # capturing, A starts while B is inside, B ends while A is inside: unless A waits for
    # B, B puts back the real names under A and A then puts back B's swaps for good.
    import builtins
    import threading
    real_range, real_arange = builtins.range, torch.arange
    b_inside, a_inside, b_done = threading.Event(), threading.Event(), threading.Event()

    def b_fn(x):
        b_inside.set()
        a_inside.wait(0.5)
        return torch.arange(x.shape[0]) * x

    def a_fn(x):
        a_inside.set()
        b_done.wait(0.5)
        return torch.arange(x.shape[0]) + x

    got = {}

    def run_b():
        got["b"] = torch.compile(b_fn, dynamic=True)(torch.ones(4))
        b_done.set()

    tb = threading.Thread(target=run_b)
    tb.start()
    assert b_inside.wait(10)
    got["a"] = torch.compile(a_fn, dynamic=True)(torch.ones(3))
    tb.join(10)
    assert builtins.range is real_range and torch.arange is real_arange
    np.testing.assert_array_equal(_np(got["b"]), [0, 1, 2, 3])
    np.testing.assert_array_equal(_np(got["a"]), [1, 2, 3])
