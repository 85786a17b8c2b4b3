"""torch.func against PyTorch 2.13's: grad / grad_and_value / vjp / jvp / jacrev / jacfwd /
hessian / vmap / functional_call / stack_module_state give the same values, the same
result structure, the same requires_grad on results, compose the same way (nested
transforms, per-sample gradients, ensembles), and raise PyTorch's errors."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
A = RNG.standard_normal(4)
B = RNG.standard_normal((2, 4))
C = RNG.standard_normal((5, 4))


def _t(tl, a, **kw):
    return tl.tensor(a, dtype=tl.float64, **kw)


def _np(obj):
    if isinstance(obj, (tuple, list)):
        return type(obj)(_np(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _np(v) for k, v in obj.items()}
    return np.asarray(obj.detach().cpu().numpy(), np.float64)


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k])
    else:
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


def both(run):
    """run(tl) with each library; the results, as arrays, must agree."""
    _same(_np(run(dt)), _np(run(torch)))


def f_scalar(x):
    return (x.sin() * x ** 2).sum()


def f_two(x, y):
    return (x * y).sum() * x.cos().sum() + (y ** 3).sum()


def f_dict(p):
    return (p["w"] * p["b"].exp()).sum() + p["w"].pow(2).sum()


@pytest.mark.parametrize("case", ["one", "argnum1", "tuple", "dict", "aux", "and_value",
                                  "and_value_aux", "nested", "nested_mixed", "negative"])
def test_grad(case):
    def run(tl):
        F = tl.func
        x, y = _t(tl, A), _t(tl, B)
        if case == "one":
            return F.grad(f_scalar)(x)
        if case == "argnum1":
            return F.grad(f_two, argnums=1)(x, y)
        if case == "tuple":
            return F.grad(f_two, argnums=(0, 1))(x, y)
        if case == "negative":
            return F.grad(f_two, argnums=-1)(x, y)
        if case == "dict":
            return F.grad(f_dict)({"w": x, "b": y[0]})
        if case == "aux":
            g, aux = F.grad(lambda a: (f_scalar(a), a * 2), has_aux=True)(x)
            return g, aux
        if case == "and_value":
            return F.grad_and_value(f_two, argnums=(0, 1))(x, y)
        if case == "and_value_aux":
            g, (v, aux) = F.grad_and_value(lambda a: (f_scalar(a), {"k": a.exp()}), has_aux=True)(x)
            return g, v, aux["k"]
        if case == "nested":
            return F.grad(lambda a: F.grad(f_scalar)(a).sum())(x)
        return F.grad(lambda b: F.grad(f_two)(x, b).pow(2).sum())(y)
    both(run)


def test_results_require_grad_as_in_pytorch():
    """Plain inputs give plain results; an input or a closed-over tensor that requires grad
    keeps the result differentiable, with PyTorch's second derivatives."""
    flags, seconds = [], []
    for tl in (dt, torch):
        F = tl.func
        x = _t(tl, A)
        w = _t(tl, A, requires_grad=True)
        plain = F.grad(f_scalar)(x)
        g_input = F.grad(f_scalar)(w)
        g_closure = F.grad(lambda a: (a * w).sin().sum())(x)
        flags.append((plain.requires_grad, g_input.requires_grad, g_closure.requires_grad,
                      F.jacrev(lambda a: a.sin())(x).requires_grad,
                      F.vjp(lambda a: a * w, x)[0].requires_grad))
        (d1,) = tl.autograd.grad(g_input.sum(), w)
        (d2,) = tl.autograd.grad(g_closure.sum(), w)
        seconds.append((d1, d2))
    assert flags[0] == flags[1]
    _same(_np(seconds[0]), _np(seconds[1]))


@pytest.mark.parametrize("case", ["single", "tuple_out", "dict_out", "twice", "aux"])
def test_vjp(case):
    def run(tl):
        x, y = _t(tl, A), _t(tl, B)
        if case == "single":
            out, fn = tl.func.vjp(lambda a: a.exp() * 2, x)
            return out, fn(_t(tl, A[::-1].copy()))
        if case == "tuple_out":
            out, fn = tl.func.vjp(lambda a, b: (a * b, b.sum(0)), x, y)
            return out, fn((_t(tl, B), _t(tl, A)))
        if case == "dict_out":
            out, fn = tl.func.vjp(lambda a: {"s": a.sin(), "c": a.cos().sum()}, x)
            return fn({"s": _t(tl, A), "c": _t(tl, 2.0)})
        if case == "twice":
            out, fn = tl.func.vjp(lambda a: a ** 3, x)
            return fn(tl.ones_like(x)), fn(_t(tl, A))
        out, fn, aux = tl.func.vjp(lambda a: (a.tanh(), a + 1), x, has_aux=True)
        return out, fn(tl.ones_like(x)), aux
    both(run)


@pytest.mark.parametrize("case", ["single", "two", "tuple_out", "aux", "unconnected"])
def test_jvp(case):
    def run(tl):
        x, y = _t(tl, A), _t(tl, B)
        if case == "single":
            return tl.func.jvp(lambda a: a.sin() * a, (x,), (_t(tl, A[::-1].copy()),))
        if case == "two":
            return tl.func.jvp(lambda a, b: (a * b).sum(0), (x, y), (tl.ones_like(x), _t(tl, B)))
        if case == "tuple_out":
            return tl.func.jvp(lambda a: (a.exp(), a.sum()), (x,), (_t(tl, A),))
        if case == "aux":
            return tl.func.jvp(lambda a: (a ** 2, a.sum()), (x,), (_t(tl, A),), has_aux=True)
        return tl.func.jvp(lambda a, b: b * 2, (x, y), (_t(tl, A), _t(tl, B)))
    both(run)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", ["vec", "tuple_argnums", "tuple_out", "dict_arg", "aux"])
def test_jacobians(which, case):
    def run(tl):
        J = getattr(tl.func, which)
        x, y = _t(tl, A), _t(tl, B)
        if case == "vec":
            return J(lambda a: a.sin() * a.sum())(x)
        if case == "tuple_argnums":
            return J(lambda a, b: (a * b).sum(1), argnums=(0, 1))(x, y)
        if case == "tuple_out":
            return J(lambda a: (a.exp(), a.sum()))(x)
        if case == "dict_arg":
            return J(lambda p: p["w"] * p["b"])({"w": x, "b": y[1]})
        return J(lambda a: (a ** 2, a.cos()), has_aux=True)(x)
    both(run)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_hessian(argnums):
    both(lambda tl: tl.func.hessian(f_two, argnums=argnums)(_t(tl, A), _t(tl, B)))


@pytest.mark.parametrize("case", ["dot", "in_dims_none", "in_dims_1", "negative_in_dim",
                                  "out_dims_1", "out_dims_tuple", "out_dims_none", "dict_input",
                                  "nested_in_dims", "nested_vmap", "kwargs", "jacrev_inside",
                                  "tuple_out"])
def test_vmap(case):
    def run(tl):
        V = tl.func.vmap
        b, c = _t(tl, B), _t(tl, C)
        x = _t(tl, A)
        if case == "dot":
            return V(tl.dot)(c, c.flip(0))
        if case == "in_dims_none":
            return V(lambda u, v: u @ v, in_dims=(0, None))(c, x)
        if case == "in_dims_1":
            return V(lambda u: u.sum() * u, in_dims=1)(b)
        if case == "negative_in_dim":
            return V(lambda u: u.cumsum(0), in_dims=-1)(c)
        if case == "out_dims_1":
            return V(lambda u: u.exp() * 2, out_dims=1)(c)
        if case == "out_dims_tuple":
            return V(lambda u: (u.sin(), u.sum()), out_dims=(1, 0))(c)
        if case == "out_dims_none":
            out, const = V(lambda u: (u * 2, x), out_dims=(0, None))(c)
            return out, const
        if case == "dict_input":
            return V(lambda p: p["a"] * p["b"])({"a": c, "b": c.cos()})
        if case == "nested_in_dims":
            return V(lambda p, u: p["a"] * u + p["s"], in_dims=({"a": 0, "s": None}, 0))(
                {"a": c, "s": x}, c)
        if case == "nested_vmap":
            return V(V(lambda s, t: s * t), in_dims=(0, None))(c, x)
        if case == "kwargs":
            return V(lambda u, *, scale: u * scale)(c, scale=3.0)
        if case == "jacrev_inside":
            return V(tl.func.jacrev(lambda u: u.sin() * u.sum()))(c)
        return V(lambda u: {"m": u.max(), "s": (u.sum(), u.mean())})(c)
    both(run)


def _mlp(tl):
    tl.manual_seed(0)
    return tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 2)).double()


def _copy_weights(src, dst):
    with dt.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(dt.tensor(p.detach().numpy()))


def test_per_sample_gradients():
    """The torch.func tutorial's per-sample gradients: vmap(grad(loss)) over a batch."""
    theirs_model = _mlp(torch)
    ours_model = _mlp(dt)
    _copy_weights(theirs_model, ours_model)
    out = []
    for tl, model in ((dt, ours_model), (torch, theirs_model)):
        params = {k: v.detach() for k, v in model.named_parameters()}
        data, targets = _t(tl, C), tl.tensor([0, 1, 1, 0, 1])

        def loss(p, x, y):
            logits = tl.func.functional_call(model, p, (x.unsqueeze(0),))
            return tl.nn.functional.cross_entropy(logits, y.unsqueeze(0))
        g = tl.func.vmap(tl.func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
        assert not any(v.requires_grad for v in g.values())
        out.append(g)
    _same(_np(out[0]), _np(out[1]))


def test_ensemble_with_stack_module_state():
    theirs_models = [_mlp(torch) for _ in range(3)]
    for i, m in enumerate(theirs_models):
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(1 + i)
    ours_models = [_mlp(dt) for _ in range(3)]
    for s, d in zip(theirs_models, ours_models):
        _copy_weights(s, d)
    out = []
    for tl, models in ((dt, ours_models), (torch, theirs_models)):
        params, buffers = tl.func.stack_module_state(models)
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        base = models[0]

        def run(p, b, x):
            return tl.func.functional_call(base, (p, b), (x,))
        out.append(tl.func.vmap(run, in_dims=(0, 0, None))(params, buffers, _t(tl, C)))
    _same(_np(out[0]), _np(out[1]))


def test_randomness_modes():
    x = dt.zeros(4, 3)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error mode"):
        dt.func.vmap(lambda u: u + dt.rand(3))(x)
    same = dt.func.vmap(lambda u: u + dt.rand(3), randomness="same")(x)
    assert all(dt.equal(same[0], same[i]) for i in range(4))
    different = dt.func.vmap(lambda u: u + dt.rand(3), randomness="different")(x)
    assert not dt.equal(different[0], different[1])


ERRORS = {
    "grad_vector": lambda tl, x: tl.func.grad(lambda a: a.sin())(x),
    "grad_not_tensor": lambda tl, x: tl.func.grad(lambda a: 3)(x),
    "grad_argnum_range": lambda tl, x: tl.func.grad(lambda a: a.sum(), argnums=2)(x),
    "grad_argnum_type": lambda tl, x: tl.func.grad(lambda a: a.sum(), argnums=1.5)(x),
    "grad_aux_not_pair": lambda tl, x: tl.func.grad(lambda a: a.sum(), has_aux=True)(x),
    "jvp_not_tuple": lambda tl, x: tl.func.jvp(lambda a: a, x, (x,)),
    "jvp_structure": lambda tl, x: tl.func.jvp(lambda a: a, (x,), (x, x)),
    "jvp_shape": lambda tl, x: tl.func.jvp(lambda a: a, (x,), (x[:2],)),
    "vmap_float_input": lambda tl, x: tl.func.vmap(lambda a: a)(3.0),
    "vmap_sizes": lambda tl, x: tl.func.vmap(lambda a, b: a)(x, tl.ones(5)),
    "vmap_in_dims_structure": lambda tl, x: tl.func.vmap(lambda a: a, in_dims=(0, 0))(x),
    "vmap_in_dims_none": lambda tl, x: tl.func.vmap(lambda a: a, in_dims=None)(x),
    "vmap_in_dim_range": lambda tl, x: tl.func.vmap(lambda a: a, in_dims=1)(x),
    "vmap_all_none": lambda tl, x: tl.func.vmap(lambda a: a, in_dims=(None,))(x),
    "vmap_float_output": lambda tl, x: tl.func.vmap(lambda a: 3.0)(x),
    "vmap_randomness": lambda tl, x: tl.func.vmap(lambda a: a, randomness="x")(x),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_pytorch(case):
    got = []
    for tl in (dt, torch):
        with pytest.raises(Exception) as info:
            ERRORS[case](tl, _t(tl, A))
        got.append((info.type, str(info.value)))
    assert got[0][0] is got[1][0], got
    assert got[0][1] == got[1][1].replace("torch.", "dispatchtorch."), got


def test_torch_vmap_is_func_vmap():
    assert dt.vmap is dt.func.vmap
