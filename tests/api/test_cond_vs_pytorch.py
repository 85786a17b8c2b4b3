"""torch.cond against PyTorch's, eagerly (values, gradients through the taken branch,
argument errors) and under dispatchtorch.compile (a tensor pred is a graph break)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

X = np.random.default_rng(0).standard_normal(4)


def _branches(lib):
    def true_fn(a, b):
        return (a.sin() * b, {"s": a.sum()})

    def false_fn(a, b):
        return (a.cos() + b, {"s": (a * b).sum()})
    return true_fn, false_fn


def _run(lib, pred_of):
    a = lib.tensor(X, requires_grad=True)
    b = lib.tensor(X[::-1].copy())
    t, f = _branches(lib)
    out, d = lib.cond(pred_of(lib, a), t, f, (a, b))
    (out.sum() + d["s"]).backward()
    return out.detach().numpy(), d["s"].item(), a.grad.numpy()


PREDS = {
    "tensor_true": lambda lib, a: lib.tensor(True),
    "tensor_false": lambda lib, a: lib.tensor(False),
    "data_dependent": lambda lib, a: a.sum() > 0,
    "one_element": lambda lib, a: lib.tensor([[False]]),
    "float_tensor": lambda lib, a: lib.tensor(0.5),
    "int_tensor": lambda lib, a: lib.tensor(0),
    "bool": lambda lib, a: True,
    "int": lambda lib, a: 0,
    "float": lambda lib, a: 1.5,
}


@pytest.mark.parametrize("pred", list(PREDS))
def test_cond_values_and_grad(pred):
    theirs, ours = _run(torch, PREDS[pred]), _run(dt, PREDS[pred])
    for t, o in zip(theirs, ours):
        np.testing.assert_allclose(o, t, rtol=1e-12)


def test_cond_operands_list_nested_and_closure():
    for lib in (torch, dt):
        x = lib.tensor(X)
        r = lib.cond(lib.tensor(False), lambda d: d["a"] + d["b"][0],
                     lambda d: d["a"] - d["b"][0] * 2, [{"a": x, "b": [x]}])
        np.testing.assert_allclose(r.numpy(), -X)
        r = lib.cond(lib.tensor(True), lambda: x * 2, lambda: x * 3)
        np.testing.assert_allclose(r.numpy(), 2 * X)
        r = lib.cond(pred=lib.tensor(True), true_fn=lambda a: a + 1, false_fn=lambda a: a * 1,
                     operands=(x,))
        np.testing.assert_allclose(r.numpy(), X + 1)


BAD = {
    "str_pred": lambda lib, x: lib.cond("a", lambda a: a, lambda a: a, (x,)),
    "none_pred": lambda lib, x: lib.cond(None, lambda a: a, lambda a: a, (x,)),
    "two_element": lambda lib, x: lib.cond(lib.tensor([True, False]), lambda a: a * 1,
                                           lambda a: a * 2, (x,)),
    "empty_pred": lambda lib, x: lib.cond(lib.tensor([]), lambda a: a * 1, lambda a: a * 2,
                                          (x,)),
    "not_callable": lambda lib, x: lib.cond(lib.tensor(True), 1, lambda a: a, (x,)),
    "int_operand": lambda lib, x: lib.cond(lib.tensor(True), lambda a, b: a * 1,
                                           lambda a, b: a * 2, (x, 1)),
    "tensor_operands": lambda lib, x: lib.cond(lib.tensor(True), lambda a: a * 1,
                                               lambda a: a * 2, x),
}


@pytest.mark.parametrize("case", list(BAD))
def test_cond_errors(case):
    caught = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as info:
            BAD[case](lib, lib.tensor([1.0, 2.0]))
        caught.append(info.value)
    assert type(caught[1]) is type(caught[0])
    assert str(caught[1]) == str(caught[0])


def test_cond_constant_pred_checks_nothing():
    # PyTorch's constant path calls the branch at once: a non-callable other branch passes
    for lib in (torch, dt):
        assert lib.cond(True, lambda: 7, None) == 7


def _f(x):
    return dt.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.cos() * 3, (x,)) * 2


def test_cond_compiled_matches_eager():
    cf = dt.compile(_f)
    for sign in (1.0, -1.0, 1.0):
        x = dt.tensor(sign * np.abs(X), requires_grad=True)
        x2 = dt.tensor(sign * np.abs(X), requires_grad=True)
        want, got = _f(x), cf(x2)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
        want.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(x2.grad.numpy(), x.grad.numpy())


def test_cond_tensor_pred_breaks_fullgraph():
    with pytest.raises(dt._dynamo.exc.Unsupported, match="cond breaks the graph"):
        dt.compile(_f, fullgraph=True)(dt.tensor(X))


def test_cond_constant_pred_compiles_whole():
    def g(x):
        return dt.cond(True, lambda a: a.sin(), lambda a: a.cos(), (x,)) * 2
    x = dt.tensor(X)
    np.testing.assert_allclose(dt.compile(g, fullgraph=True)(x).numpy(), g(x).numpy())


def _dup(a):
    b = a * 1
    return (b, b.view(2))


REFUSED = {   # what PyTorch's tracing of a branch refuses, with a tensor pred
    "returns_operand": lambda a: a,
    "returns_view": lambda a: a.view(2),
    "same_output_twice": _dup,
    "returns_none": lambda a: None,
    "returns_str": lambda a: (a * 1, "s"),
    "mutates_operand": lambda a: a.add_(1),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_cond_refuses_what_tracing_refuses(case):
    caught = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as info:
            lib.cond(lib.tensor(True), REFUSED[case], lambda a: a * 2, (lib.tensor([1.0, 2.0]),))
        caught.append(info.value)
    theirs, ours = (str(e).split("\n") for e in caught)
    assert type(caught[1]).__name__ == type(caught[0]).__name__ == "UncapturedHigherOrderOpError"
    assert ours[:4] == theirs[:4]
    assert theirs[4].startswith(ours[4])


def test_cond_int_outputs_pass():
    for lib in (torch, dt):
        r = lib.cond(lib.tensor(False), lambda a: (a * 1, 3), lambda a: (a * 2, 4),
                     (lib.tensor([1.0]),))
        assert r[1] == 4 and r[0].tolist() == [2.0]
