"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) and
autograd.grad(is_grads_batched=True) against PyTorch 2.13: the same values, the same
nesting of tuples, graphs kept with create_graph, PyTorch's errors in strict mode and for
bad arguments."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
V3 = RNG.standard_normal(3)
V23 = RNG.standard_normal((2, 3))


def _t(tl, a):
    return tl.tensor(a, dtype=tl.float64)


def _np(obj):
    """Nested tuples of tensors -> nested tuples of float64 arrays."""
    if isinstance(obj, tuple):
        return tuple(_np(o) for o in obj)
    return np.asarray(obj.detach().cpu().numpy(), np.float64)


def _same(ours, theirs):
    assert type(ours) is type(theirs) or not isinstance(theirs, tuple), (ours, theirs)
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
    else:
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


# functions written against a library `tl`
def f_vec(tl):
    return lambda x: x.sin() * x.exp() + x ** 3


def f_scalar(tl):
    return lambda x: (x.sin() * x ** 2).sum()


def f_two_in_scalar(tl):
    return lambda x, y: (x * y).sum() * x.cos().sum() + (y ** 3).sum()


def f_two_in_two_out(tl):
    return lambda x, y: (x.exp() * y, (x * y).sum(0).tanh())


def f_unused(tl):
    return lambda x, y: x ** 2            # y is not used


def _args(tl, kind):
    return {"x": (_t(tl, X),), "xy": (_t(tl, X), _t(tl, Y))}[kind]


JACOBIAN_CASES = [
    (f_vec, "x", {}), (f_scalar, "x", {}), (f_two_in_two_out, "xy", {}),
    (f_two_in_two_out, "xy", {"vectorize": True}), (f_unused, "xy", {}),
    (f_vec, "x", {"vectorize": True, "strategy": "forward-mode"}),
]


def _call(tl, fn, factory, kind, **kw):
    args = _args(tl, kind)
    inputs = args[0] if len(args) == 1 else args
    return getattr(tl.autograd.functional, fn)(factory(tl), inputs, **kw)


@pytest.mark.parametrize("factory,kind,kw", JACOBIAN_CASES)
def test_jacobian(factory, kind, kw):
    _same(_np(_call(dt, "jacobian", factory, kind, **kw)),
          _np(_call(torch, "jacobian", factory, kind, **kw)))


@pytest.mark.parametrize("factory,kind", [(f_scalar, "x"), (f_two_in_scalar, "xy")])
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(factory, kind, vectorize):
    _same(_np(_call(dt, "hessian", factory, kind, vectorize=vectorize)),
          _np(_call(torch, "hessian", factory, kind, vectorize=vectorize)))


def _v(tl, kind):
    return {"x": _t(tl, V3), "xy": (_t(tl, V3), _t(tl, V23))}[kind]


@pytest.mark.parametrize("fn,factory,kind,v_of", [
    ("vjp", f_vec, "x", "x"), ("vjp", f_scalar, "x", None),
    ("vjp", f_two_in_two_out, "xy", "xy2"), ("vjp", f_unused, "xy", "x"),
    ("jvp", f_vec, "x", "x"), ("jvp", f_two_in_two_out, "xy", "xy"), ("jvp", f_unused, "xy", "xy"),
    ("vhp", f_scalar, "x", "x"), ("vhp", f_two_in_scalar, "xy", "xy"),
    ("hvp", f_scalar, "x", "x"), ("hvp", f_two_in_scalar, "xy", "xy"),
])
def test_products(fn, factory, kind, v_of):
    def v(tl):
        if v_of is None:
            return None
        if v_of == "xy2":     # cotangents of f_two_in_two_out's outputs: shapes (2, 3) and (3,)
            return (_t(tl, V23), _t(tl, V3))
        return _v(tl, v_of)
    _same(_np(_call(dt, fn, factory, kind, v=v(dt))), _np(_call(torch, fn, factory, kind, v=v(torch))))


@pytest.mark.parametrize("fn", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"])
def test_create_graph_keeps_a_differentiable_result(fn):
    """The result of create_graph=True differentiates to PyTorch's second-order values."""
    results = []
    for tl in (dt, torch):
        x = _t(tl, X).requires_grad_(True)
        kw = {"create_graph": True}
        if fn in ("vjp", "jvp", "vhp", "hvp"):
            kw["v"] = _t(tl, V3)
        factory = f_scalar if fn in ("vhp", "hvp", "hessian") else f_vec
        out = getattr(tl.autograd.functional, fn)(factory(tl), x, **kw)
        res = out[1] if isinstance(out, tuple) else out
        assert res.requires_grad
        (g,) = tl.autograd.grad(res.sum(), x)
        results.append(_np(g))
    _same(results[0], results[1])


def test_results_are_detached_without_create_graph():
    x = _t(dt, X).requires_grad_(True)
    out, res = dt.autograd.functional.vjp(f_vec(dt), x, _t(dt, V3))
    assert not out.requires_grad and not res.requires_grad


def _error(tl, fn, *args, **kw):
    with pytest.raises(Exception) as info:
        getattr(tl.autograd.functional, fn)(*args, **kw)
    return info.type, str(info.value)


@pytest.mark.parametrize("case", [
    "strict_unused", "strict_constant_output", "v_missing", "v_wrong_size", "v_wrong_length",
    "not_tensor_input", "hessian_vector_output", "strategy", "forward_no_vectorize",
    "forward_create_graph", "strict_vectorize", "vhp_tuple_output", "strict_linear_hessian",
])
def test_errors_match_pytorch(case):
    def run(tl):
        x, y = _t(tl, X), _t(tl, Y)
        F = {
            "strict_unused": lambda: ("jacobian", f_unused(tl), (x, y), {"strict": True}),
            "strict_constant_output": lambda: ("vjp", lambda a: tl.ones(3, dtype=tl.float64), x,
                                               {"v": _t(tl, V3), "strict": True}),
            "v_missing": lambda: ("vjp", f_vec(tl), x, {}),
            "v_wrong_size": lambda: ("jvp", f_vec(tl), x, {"v": tl.ones(4, dtype=tl.float64)}),
            "v_wrong_length": lambda: ("jvp", f_two_in_two_out(tl), (x, y), {"v": (_t(tl, V3),)}),
            "not_tensor_input": lambda: ("jacobian", f_vec(tl), (x, 3.0), {}),
            "hessian_vector_output": lambda: ("hessian", f_vec(tl), x, {}),
            "strategy": lambda: ("jacobian", f_vec(tl), x, {"strategy": "sideways"}),
            "forward_no_vectorize": lambda: ("jacobian", f_vec(tl), x, {"strategy": "forward-mode"}),
            "forward_create_graph": lambda: ("jacobian", f_vec(tl), x,
                                             {"strategy": "forward-mode", "vectorize": True,
                                              "create_graph": True}),
            "strict_vectorize": lambda: ("jacobian", f_vec(tl), x, {"strict": True, "vectorize": True}),
            "vhp_tuple_output": lambda: ("vhp", lambda a: (a.sum(), a.sum()), x, {"v": _t(tl, V3)}),
            "strict_linear_hessian": lambda: ("hessian", lambda a: (a * 2).sum(), x, {"strict": True}),
        }[case]()
        fn, func, inputs, kw = F
        return _error(tl, fn, func, inputs, **kw)
    ours, theirs = run(dt), run(torch)
    assert ours[0] is theirs[0], (ours, theirs)
    assert ours[1] == theirs[1].replace("torch.", "dispatchtorch.") or ours[1] == theirs[1], (ours, theirs)


def test_grad_with_batched_grad_outputs():
    """is_grads_batched: each row of grad_outputs is one vector-Jacobian product."""
    results = []
    for tl in (dt, torch):
        x = _t(tl, X).requires_grad_(True)
        y = _t(tl, Y).requires_grad_(True)
        out = x.exp() * y                                   # (2, 3)
        basis = tl.eye(6, dtype=tl.float64).reshape(6, 2, 3)
        gx, gy = tl.autograd.grad(out, (x, y), basis, is_grads_batched=True)
        assert tuple(gx.shape) == (6, 3) and tuple(gy.shape) == (6, 2, 3)
        results.append((_np(gx), _np(gy)))
    _same(results[0], results[1])


def test_grad_with_batched_grad_outputs_checks_the_batch():
    x = _t(dt, X).requires_grad_(True)
    with pytest.raises(RuntimeError, match="same leading batch dimension"):
        dt.autograd.grad((x * 2, x * 3), x, (dt.ones(2, 3), dt.ones(4, 3)), is_grads_batched=True)
