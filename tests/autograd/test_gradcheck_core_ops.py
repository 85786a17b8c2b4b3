"""gradcheck (float64 finite differences) for the core's differentiable ops, with
broadcasting, and gradgradcheck where second derivatives are non-trivial."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.autograd import gradcheck, gradgradcheck


def _t(shape, lo=-1.0, hi=1.0, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    return torch.tensor(rng.uniform(lo, hi, size=shape), dtype=torch.float64, requires_grad=True)


POS = dict(lo=0.2, hi=2.0)
UNARY = {
    "exp": {}, "exp2": {}, "expm1": {}, "log": POS, "log2": POS, "log10": POS,
    "log1p": POS, "sqrt": POS, "sin": {}, "cos": {}, "tan": {}, "asin": dict(lo=-0.8, hi=0.8),
    "acos": dict(lo=-0.8, hi=0.8), "atan": {}, "sinh": {}, "cosh": {}, "tanh": {},
    "asinh": {}, "acosh": dict(lo=1.2, hi=3.0), "atanh": dict(lo=-0.8, hi=0.8), "erf": {},
    "erfc": {}, "erfinv": dict(lo=-0.8, hi=0.8), "neg": {}, "abs": POS, "sigmoid": {},
    "relu": POS, "rsqrt": POS, "reciprocal": POS, "square": {},
}
SECOND_ORDER = {"exp", "log", "tanh", "sigmoid", "sin", "sqrt", "reciprocal", "erf"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn = getattr(torch, name)
    for shape in [(), (3,), (2, 3)]:
        assert gradcheck(fn, (_t(shape, **UNARY[name]),))
    if name in SECOND_ORDER:
        assert gradgradcheck(fn, (_t((2, 3), **UNARY[name]),))


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "maximum": torch.maximum,
    "minimum": torch.minimum, "atan2": torch.atan2, "fmod": torch.fmod,
    "remainder": torch.remainder, "add_alpha": lambda a, b: torch.add(a, b, alpha=2.5),
    "rsub": lambda a, b: 3 - a * b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_broadcasting(name):
    fn = BINARY[name]
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,))]:
        a = _t(sa, 0.5, 2.0, seed=1)
        b = _t(sb, 0.6, 1.7, seed=2)
        assert gradcheck(fn, (a, b)), (sa, sb)
    if name in ("mul", "div", "pow"):
        assert gradgradcheck(fn, (_t((2, 3), 0.5, 2.0), _t((3,), 0.5, 1.5)))


def test_binary_with_python_scalars():
    a = _t((2, 3), 0.5, 2.0)
    for fn in (lambda x: x * 3, lambda x: 2 / x, lambda x: x ** 2.5, lambda x: 2 ** x, lambda x: 1 - x):
        assert gradcheck(fn, (a,))


def test_where_clamp():
    a, b = _t((2, 3)), _t((3,), seed=5)
    assert gradcheck(lambda x, y: torch.where(x > 0, x, y), (a, b))
    assert gradcheck(lambda x: x.clamp(-0.5, 0.5), (a,))
    lo = _t((3,), -0.9, -0.1, seed=3)
    assert gradcheck(lambda x, m: torch.clamp(x, min=m), (a, lo))


REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1), "sum_keep": lambda x: x.sum((0, 2), keepdim=True),
    "mean": lambda x: x.mean(-1), "amax": lambda x: x.amax(1), "amin": lambda x: x.amin((0, 1)),
    "max_dim": lambda x: x.max(2).values, "min_full": lambda x: x.min(),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    assert gradcheck(REDUCTIONS[name], (_t((2, 3, 4)),))


def test_amax_ties_share_the_gradient():
    x = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.amax().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]
    y = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
    y.max(0).values.backward()          # max(dim) sends it to the returned index, as PyTorch
    assert y.grad.tolist() == [0.0, 1.0, 0.0]


VIEWS = {
    "reshape": lambda x: x.reshape(4, 6), "T": lambda x: x.transpose(0, 2), "permute": lambda x: x.permute(2, 0, 1),
    "slice": lambda x: x[:, 1:, ::2], "select": lambda x: x[1, :, 2], "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "squeeze": lambda x: x[:, :1].squeeze(1), "unsqueeze": lambda x: x.unsqueeze(1),
    "flatten": lambda x: x.flatten(1), "narrow": lambda x: x.narrow(2, 1, 2), "diagonal": lambda x: x.diagonal(0, 1, 2),
    "unfold_overlapping": lambda x: x.unfold(2, 3, 1), "split": lambda x: x.split([1, 3], 2)[1],
    "chunk": lambda x: torch.cat(x.chunk(2, 2)[::-1], 2), "unbind": lambda x: x.unbind(1)[2],
    "as_strided": lambda x: x.as_strided((3, 3), (4, 1), 1), "adv_index": lambda x: x[torch.tensor([1, 0, 1])],
    "mask": lambda x: x[x > 0], "stack": lambda x: torch.stack([x, x * 2], 1),
    "contiguous": lambda x: x.transpose(0, 1).contiguous(), "clone": lambda x: x.clone(),
    "movedim": lambda x: x.movedim(0, -1), "gather": lambda x: x.gather(2, torch.tensor([[[0, 3]] * 3] * 2)),
    "index_select": lambda x: x.index_select(1, torch.tensor([2, 0, 2])),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_and_indexing_ops(name):
    assert gradcheck(VIEWS[name], (_t((2, 3, 4)),))


def test_view_grads_double_backward():
    assert gradgradcheck(lambda x: (x[:, 1:] * x[:, :-1]).sum(1), (_t((2, 4)),))


def test_scatter_family():
    idx = torch.tensor([[0, 2], [1, 0]])
    a, src = _t((2, 3)), _t((2, 2), seed=9)
    assert gradcheck(lambda x, s: x.scatter(1, idx, s), (a, src))
    assert gradcheck(lambda x, s: x.scatter_add(1, idx, s), (a, src))
    assert gradcheck(lambda x, s: torch.index_add(x, 0, torch.tensor([1, 1]), s[:, :1].expand(2, 3)), (a, src))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)),
                                   ((2, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2))])
def test_matmul(sa, sb):
    assert gradcheck(lambda a, b: a @ b, (_t(sa), _t(sb, seed=4)))


def test_matmul_second_order():
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (_t((2, 3)), _t((3, 2), seed=4)))


def test_setitem_and_inplace_through_views():
    def f(x):
        y = x * 1
        y[:, 0] = y[:, 1] * 3
        y[1] += x[0]
        return y
    assert gradcheck(f, (_t((2, 3)),))
    assert gradgradcheck(f, (_t((2, 3)),))

    def g(x):
        y = torch.zeros(3, 3, dtype=torch.float64)
        y[torch.tensor([0, 2]), torch.tensor([1, 1])] = x[:2] ** 2
        return y
    assert gradcheck(g, (_t((3,)),))


def test_to_and_cat():
    a = _t((2, 3))
    assert gradcheck(lambda x: torch.cat([x, x * 2], 0), (a,))
    b = torch.ones(2, requires_grad=True)
    (b.double() * torch.tensor([2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert b.grad.dtype is torch.float32 and b.grad.tolist() == [2.0, 3.0]
