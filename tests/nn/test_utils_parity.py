"""nn.utils against PyTorch: weight/spectral normalisation (hook and parametrization
forms), parametrize, BatchNorm fusion, functional_call, skip_init, clipping, and
the rest of nn.init."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, copy_params, to_np

import dispatchtorch as dt
import dispatchtorch.nn as nn

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _twins(torch, expr):
    torch.manual_seed(0)
    t = eval(expr, {"nn": torch.nn})
    o = eval(expr, {"nn": nn})
    copy_params(t, o)
    return o, t


def _run(torch, o, t, x, steps=2):
    """A few training forwards (power iterations advance) and one backward."""
    for _ in range(steps):
        yo, yt = o(dt.tensor(x)), t(torch.tensor(x))
        assert_close(yo, yt, 1e-4, 1e-5)
    (yo ** 2).sum().backward()
    (yt ** 2).sum().backward()
    tp = dict(t.named_parameters())
    assert [n for n, _ in o.named_parameters()] == list(tp)
    for name, p in o.named_parameters():
        assert_close(p.grad, tp[name].grad, 1e-4, 1e-5)
    sd_t = t.state_dict()
    assert list(o.state_dict()) == list(sd_t)
    for k, v in o.state_dict().items():
        assert_close(v, sd_t[k], 1e-4, 1e-5)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook_form_matches_pytorch(torch, dim):
    o, t = _twins(torch, "nn.Conv2d(3, 4, 3)")
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(o, dim=dim)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(t, dim=dim)
    _run(torch, o, t, r(2, 3, 5, 5))
    nn.utils.remove_weight_norm(o)
    torch.nn.utils.remove_weight_norm(t)
    assert_close(o.weight, t.weight, 1e-5, 1e-6)
    assert [n for n, _ in o.named_parameters()] == [n for n, _ in t.named_parameters()]


@pytest.mark.parametrize("expr", ["nn.Linear(5, 4)", "nn.ConvTranspose2d(3, 4, 3)"])
def test_spectral_norm_hook_form_matches_pytorch(torch, expr):
    o, t = _twins(torch, expr)
    nn.utils.spectral_norm(o)
    torch.nn.utils.spectral_norm(t)
    copy_params(t, o)                 # the same random u, v
    x = r(3, 5) if "Linear" in expr else r(1, 3, 4, 4)
    _run(torch, o, t, x)
    o.eval()
    t.eval()
    assert_close(o(dt.tensor(x)), t(torch.tensor(x)), 1e-4, 1e-5)
    nn.utils.remove_spectral_norm(o)
    torch.nn.utils.remove_spectral_norm(t)
    assert_close(o.weight, t.weight, 1e-4, 1e-5)


def test_parametrizations_weight_and_spectral_norm_match_pytorch(torch):
    P, TP = nn.utils.parametrizations, torch.nn.utils.parametrizations
    o, t = _twins(torch, "nn.Linear(5, 4)")
    P.weight_norm(o)
    TP.weight_norm(t)
    assert type(o).__name__ == type(t).__name__ == "ParametrizedLinear"
    _run(torch, o, t, r(3, 5))
    o, t = _twins(torch, "nn.Conv1d(3, 4, 2)")
    P.spectral_norm(o)
    TP.spectral_norm(t)
    copy_params(t, o)
    _run(torch, o, t, r(2, 3, 6))


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


def test_register_parametrization_cached_and_remove():
    P = nn.utils.parametrize
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert P.type_before_parametrizations(m) is nn.Linear
    w = to_np(m.weight)
    assert np.allclose(w, w.T)
    assert "parametrizations.weight.original" in m.state_dict()
    with P.cached():
        assert m.weight is m.weight
    a = dt.randn(3, 3)
    m.weight = a + a.T                        # right_inverse stores the upper triangle
    assert np.allclose(to_np(m.weight), to_np(a + a.T), atol=1e-6)
    y = m(dt.ones(1, 3))
    y.sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and isinstance(m.weight, nn.Parameter)
    assert np.allclose(to_np(m.weight), to_np(a + a.T), atol=1e-6)
    with pytest.raises(ValueError, match="does not have a parameter"):
        P.register_parametrization(m, "nope", Symmetric())


def test_fusion_matches_pytorch(torch):
    for conv_expr, bn_expr, x in (("nn.Conv2d(3, 4, 3)", "nn.BatchNorm2d(4)", r(2, 3, 5, 5)),
                                  ("nn.ConvTranspose2d(3, 4, 3)", "nn.BatchNorm2d(4)",
                                   r(2, 3, 4, 4)),
                                  ("nn.Linear(5, 4)", "nn.BatchNorm1d(4)", r(3, 5))):
        co, ct = _twins(torch, conv_expr)
        bo, bt = _twins(torch, bn_expr)
        with torch.no_grad():
            bt.running_mean.uniform_(-1, 1)
            bt.running_var.uniform_(0.5, 2)
            bt.weight.uniform_(0.5, 2)
            bt.bias.uniform_(-1, 1)
        copy_params(bt, bo)
        for m in (co, ct, bo, bt):
            m.eval()
        transpose = "Transpose" in conv_expr
        if "Linear" in conv_expr:
            fo, ft = nn.utils.fuse_linear_bn_eval(co, bo), torch.nn.utils.fuse_linear_bn_eval(ct, bt)
        else:
            fo = nn.utils.fuse_conv_bn_eval(co, bo, transpose)
            ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose)
        assert_close(fo(dt.tensor(x)), ft(torch.tensor(x)), 1e-4, 1e-5)
        assert_close(fo(dt.tensor(x)), bo(co(dt.tensor(x))), 1e-4, 1e-5)


def test_functional_call_matches_pytorch(torch):
    o, t = _twins(torch, "nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))")
    w, b = r(4, 3), r(4)
    x = r(5, 3)
    yo = nn.utils.stateless.functional_call(o, {"0.weight": dt.tensor(w), "0.bias": dt.tensor(b)},
                                            (dt.tensor(x),))
    yt = torch.func.functional_call(t, {"0.weight": torch.tensor(w), "0.bias": torch.tensor(b)},
                                    (torch.tensor(x),))
    assert_close(yo, yt, 1e-4, 1e-5)
    assert_close(o[0].weight, t[0].weight)          # restored
    with pytest.raises(RuntimeError, match="Missing key"):
        nn.utils.stateless.functional_call(o, {"0.weight": dt.tensor(w)}, (dt.tensor(x),),
                                           strict=True)


def test_tied_weights_follow_functional_call():
    lin = nn.Linear(2, 2, bias=False)
    m = nn.Sequential(lin, nn.Linear(2, 2, bias=False))
    m[1].weight = lin.weight
    w = dt.eye(2) * 3
    y = nn.utils.stateless.functional_call(m, {"0.weight": w}, dt.ones(1, 2))
    assert to_np(y).tolist() == [[9.0, 9.0]]


def test_skip_init_and_clip_grads_with_norm(torch):
    m = nn.utils.skip_init(nn.Linear, 3, 4)
    assert tuple(m.weight.shape) == (4, 3) and m.weight.device.type == "cpu"
    ps = [nn.Parameter(dt.tensor(r(3))) for _ in range(2)]
    tps = [torch.nn.Parameter(torch.tensor(to_np(p)).float()) for p in ps]
    for p, tp in zip(ps, tps):
        g = r(3)
        p.grad, tp.grad = dt.tensor(g), torch.tensor(g)
    total = nn.utils.get_total_norm([p.grad for p in ps])
    nn.utils.clip_grads_with_norm_(ps, 0.5, total)
    torch.nn.utils.clip_grads_with_norm_(tps, 0.5, torch.nn.utils.get_total_norm(
        [p.grad for p in tps]))
    for p, tp in zip(ps, tps):
        assert_close(p.grad, tp.grad)


def test_sparse_init_zeroes_each_column_and_aliases():
    w = dt.empty(10, 5)
    nn.init.sparse_(w, 0.25, std=0.5)
    assert to_np((w == 0).sum(0)).tolist() == [3] * 5
    assert nn.init.sparse is nn.init.sparse_ and nn.init.eye is nn.init.eye_
    assert nn.init.dirac is nn.init.dirac_


class WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.note = "a"

    def get_extra_state(self):
        return {"note": self.note}

    def set_extra_state(self, state):
        self.note = state["note"]


def test_extra_state_round_trips_through_state_dict():
    a, b = WithExtra(), WithExtra()
    a.note = "changed"
    sd = a.state_dict()
    assert sd["_extra_state"] == {"note": "changed"}
    b.load_state_dict(sd)
    assert b.note == "changed"
    with pytest.raises(RuntimeError, match="_extra_state"):
        b.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})


@pytest.mark.parametrize("shape,kw", [((4, 4), {}), ((5, 3), {}), ((3, 5), {}),
                                      ((5, 3), {"orthogonal_map": "matrix_exp"}),
                                      ((4, 4), {"orthogonal_map": "householder"})])
def test_orthogonal_parametrization_matches_pytorch(torch, shape, kw):
    o, t = _twins(torch, f"nn.Linear({shape[1]}, {shape[0]})")
    nn.utils.parametrizations.orthogonal(o, **kw)
    torch.nn.utils.parametrizations.orthogonal(t, **kw)
    assert list(o.state_dict()) == list(t.state_dict())
    with torch.no_grad():                       # a point away from the identity
        t.parametrizations.weight.original.add_(torch.randn(shape) * 0.3)
    copy_params(t, o)                           # the same (random) trivialization base
    assert_close(o.weight, t.weight, 1e-5, 1e-5)
    x = r(2, shape[1])
    (o(dt.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    assert_close(o.parametrizations.weight.original.grad,
                 t.parametrizations.weight.original.grad, 1e-4, 1e-5)


def test_orthogonal_of_a_square_weight_keeps_it_orthogonal_through_training():
    m = nn.Linear(4, 4)
    nn.utils.parametrizations.orthogonal(m)
    opt = dt.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (m(dt.randn(8, 4)) ** 2).sum().backward()
        opt.step()
    w = to_np(m.weight)
    assert np.allclose(w.T @ w, np.eye(4), atol=1e-5)
    with pytest.raises(NotImplementedError, match="cayley"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley")
