"""fill_diagonal_, register_post_accumulate_grad_hook, the is_* predicates and the in-place
aliases against PyTorch 2.13: values, gradients, hook order and counts, error texts."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

DTYPES = ["float32", "float64", "int64"]


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _err(fn, prefixed=False):
    """The same error class and text as PyTorch's (prefixed: dispatchtorch's in-place
    autograd errors name the op first, "op_: <PyTorch's text>")."""
    out = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as e:
            fn(lib)
        out.append((type(e.value), str(e.value)))
    assert out[0][0] is out[1][0]
    if prefixed:
        assert out[1][1].endswith(out[0][1])
    else:
        assert out[0][1] == out[1][1]


# -- fill_diagonal_ -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (7, 3), (8, 3), (4, 4, 4), (2, 2, 2, 2),
                                   (1, 1), (0, 0), (10, 1)])
@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_fill_diagonal_values(dtype, shape, wrap, layout):
    def run(lib):
        x = lib.arange(int(np.prod(shape)), dtype=getattr(lib, dtype)).reshape(shape)
        if layout == "transposed" and len(shape) == 2:
            x = x.t().contiguous().t()
        r = x.fill_diagonal_(-7, wrap=wrap)
        assert r is x
        return x
    _same(run(torch), run(dt))


@pytest.mark.parametrize("value", [2.5, -1, True])
def test_fill_diagonal_value_cast(value):
    for dtype in DTYPES:
        a = torch.zeros(3, 4, dtype=getattr(torch, dtype)).fill_diagonal_(value)
        b = dt.zeros(3, 4, dtype=getattr(dt, dtype)).fill_diagonal_(value)
        _same(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,wrap", [((4, 4), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 3, 3), False), ((2, 5), True)])
def test_fill_diagonal_gradient(dtype, shape, wrap):
    def run(lib):
        w = lib.arange(1, int(np.prod(shape)) + 1, dtype=getattr(lib, dtype)).reshape(shape)
        x = (w / 3).requires_grad_()
        y = x * 2
        y.fill_diagonal_(5.0, wrap=wrap)
        (y * w).sum().backward()
        return y, x.grad
    (yt, gt), (yd, gd) = run(torch), run(dt)
    np.testing.assert_allclose(yt.detach().numpy(), yd.detach().numpy(), rtol=1e-6)
    _same(gt, gd)


def test_fill_diagonal_errors():
    _err(lambda lib: lib.zeros(3).fill_diagonal_(1))
    _err(lambda lib: lib.zeros(3, 3, 2).fill_diagonal_(1))
    _err(lambda lib: lib.zeros(3, 3, requires_grad=True).fill_diagonal_(1), prefixed=True)


# -- register_post_accumulate_grad_hook -----------------------------------------------------

def _hook_log(lib):
    log = []
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0], requires_grad=True)
    a.register_hook(lambda g: log.append(("pre-a", g.tolist())))
    a.register_post_accumulate_grad_hook(lambda t: log.append(("post-a1", t.grad.tolist())))
    h = a.register_post_accumulate_grad_hook(lambda t: log.append(("post-a2", t.grad.tolist())))
    b.register_post_accumulate_grad_hook(lambda t: log.append(("post-b", t.grad.tolist())))
    loss = (a * a).sum() + (b * 3).sum() + a.sum()
    loss.backward(retain_graph=True)
    log.append("---")
    loss.backward()
    h.remove()
    log.append("---")
    ((a * 2).sum() + b.sum()).backward()
    log.append("---")
    lib.autograd.grad((a * b[0]).sum(), [a])     # .grad untouched: no post hook
    log.append("---")
    (a.sum() + b.sum()).backward(inputs=[b])       # only b accumulates
    return log


def test_post_accumulate_grad_hook_order_and_counts():
    lt, ld = _hook_log(torch), _hook_log(dt)
    # the order between two leaves is the engine's; per leaf it must match exactly
    def per_leaf(log, leaf):
        return [e for e in log if e == "---" or e[0].endswith(leaf) or e[0][:-1].endswith(leaf)]
    for leaf in ("a", "b"):
        assert per_leaf(lt, leaf) == per_leaf(ld, leaf)
    assert sorted(map(str, lt)) == sorted(map(str, ld))


def test_post_accumulate_grad_hook_sees_grad_in_no_grad_and_can_step():
    for lib in (torch, dt):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []

        def step(t):
            seen.append(lib.is_grad_enabled())
            with lib.no_grad():
                t.sub_(0.5 * t.grad)
            t.grad = None
        p.register_post_accumulate_grad_hook(step)
        (p * p).sum().backward()
        assert seen == [False] and p.grad is None
        np.testing.assert_allclose(p.detach().numpy(), [0.0, 0.0])


def test_post_accumulate_grad_hook_errors():
    _err(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda t: None))
    _err(lambda lib: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(
        lambda t: None))


# -- predicates -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool",
                                   "int8", "float16", "complex64"])
def test_is_signed(dtype):
    a = torch.zeros(2, dtype=getattr(torch, dtype))
    b = dt.zeros(2, dtype=getattr(dt, "bool_" if dtype == "bool" and not hasattr(dt, "bool")
                                  else dtype))
    assert a.is_signed() == b.is_signed() == torch.is_signed(a) == dt.is_signed(b)


@pytest.mark.parametrize("s1,s2", [((2, 3), (2, 3)), ((2, 3), (3, 2)), ((), ()), ((0,), ()),
                                   ((6,), (2, 3))])
def test_is_same_size(s1, s2):
    for dtype in DTYPES:
        a = torch.is_same_size(torch.zeros(s1, dtype=getattr(torch, dtype)), torch.ones(s2))
        b = dt.is_same_size(dt.zeros(s1, dtype=getattr(dt, dtype)), dt.ones(s2))
        assert a == b == dt.zeros(s1).is_same_size(dt.zeros(s2))


@pytest.mark.parametrize("value", [0, 1, -2, 0.0, 0.5, float("nan"), True, False])
def test_is_nonzero(value):
    for shape in ((), (1,), (1, 1)):
        a = torch.full(shape, value).is_nonzero()
        b = dt.full(shape, value).is_nonzero()
        assert a == b


def test_is_nonzero_errors():
    _err(lambda lib: lib.zeros(0).is_nonzero())
    _err(lambda lib: lib.zeros(2).is_nonzero())
    _err(lambda lib: lib.zeros(2, 3).is_nonzero())


def test_is_set_to():
    for lib in (torch, dt):
        x = lib.arange(12.0).reshape(3, 4)
        cases = [x.is_set_to(x), x.is_set_to(x.view(3, 4)), x.is_set_to(x.view(4, 3)),
                 x.is_set_to(x.t()), x.is_set_to(x.t().t()), x.is_set_to(x[1:]),
                 x.is_set_to(x.clone()), x[1:].is_set_to(x[1:]), x.is_set_to(x.detach())]
        if lib is torch:
            expected = cases
        else:
            assert cases == expected


# -- aliases --------------------------------------------------------------------------------

@pytest.mark.parametrize("alias,base", [("greater_", "gt_"), ("greater_equal_", "ge_"),
                                        ("less_", "lt_"), ("less_equal_", "le_"),
                                        ("not_equal_", "ne_"), ("multiply_", "mul_"),
                                        ("subtract_", "sub_")])
@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_aliases(alias, base, dtype):
    for other in (2, lambda lib: lib.tensor([1, 2, 3, 4], dtype=getattr(lib, dtype)) - 1):
        res = []
        for lib in (torch, dt):
            x = lib.arange(8, dtype=getattr(lib, dtype)).reshape(2, 4) - 3
            o = other(lib) if callable(other) else other
            assert getattr(x, alias)(o) is x
            y = getattr(lib.arange(8, dtype=getattr(lib, dtype)).reshape(2, 4) - 3, base)(o)
            _same(x, y) if lib is dt else None
            res.append(x)
        _same(*res)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mvlgamma_polygamma_inplace(dtype):
    for n in (0, 1, 2):
        a = torch.linspace(1.5, 4, 6, dtype=getattr(torch, dtype))
        b = dt.linspace(1.5, 4, 6, dtype=getattr(dt, dtype))
        assert a.polygamma_(n) is a and b.polygamma_(n) is b
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    for p in (1, 2, 3):
        a = torch.linspace(1.5, 4, 6, dtype=getattr(torch, dtype))
        b = dt.linspace(1.5, 4, 6, dtype=getattr(dt, dtype))
        assert a.mvlgamma_(p) is a and b.mvlgamma_(p) is b
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_multinomial_method():
    for lib in (torch, dt):
        p = lib.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
        s = p.multinomial(4, replacement=True)
        assert s.dtype == lib.int64 and tuple(s.shape) == (2, 4)
        assert s[0].tolist() == [1, 1, 1, 1] and s[1].tolist() == [2, 2, 2, 2]
    _err(lambda lib: lib.tensor([0.5, 0.5]).multinomial(3))
    _err(lambda lib: lib.tensor([0.5, 0.5]).multinomial(0, True))
    _err(lambda lib: lib.tensor([1, 1]).multinomial(1, True))
    _err(lambda lib: lib.ones(2, 2, 2).multinomial(1))
    _err(lambda lib: lib.tensor([-1.0, 1.0]).multinomial(1))
    _err(lambda lib: lib.tensor([0.0, 0.0]).multinomial(1))


def test_leaf_hooks_skip_leaves_backward_does_not_reach():
    def run(lib):
        log = []
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        a.register_post_accumulate_grad_hook(lambda t: log.append("post-a"))
        lib.autograd.grad((a * b).sum(), [b])
        log.append("|")
        (a * b).sum().backward(inputs=[b])
        log.append("|")
        (a * b).sum().backward()
        return log, a.grad is None
    assert run(torch) == run(dt)
