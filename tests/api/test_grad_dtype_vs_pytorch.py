"""Tensor.grad_dtype against PyTorch 2.13: the default, the casts backward makes to a
leaf's gradient (before its hooks, for autograd.grad too), None allowing any dtype, the
.grad assignment check, and the refusals (non-leaf, wrong type, an existing gradient)."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


def _outcome(fn, tl):
    try:
        return ("ok", fn(tl))
    except Exception as exc:        # the class and the whole message are compared
        return (type(exc).__name__, str(exc))


def _same(fn):
    ours, theirs = _outcome(fn, dt), _outcome(fn, torch)
    assert ours == theirs
    return ours


def _g(t):
    """A gradient as (dtype name, values)."""
    return None if t is None else (str(t.dtype).split(".")[-1],
                                   t.detach().double().numpy().tolist())


def _leaf(tl):
    return tl.tensor([1.0, 2.0], requires_grad=True)


def test_default_is_the_dtype():
    assert _same(lambda tl: str(_leaf(tl).grad_dtype).split(".")[-1]) == ("ok", "float32")
    assert _same(lambda tl: str(tl.zeros(2, dtype=tl.float64).grad_dtype).split(".")[-1]) == \
        ("ok", "float64")


@pytest.mark.parametrize("want", ["float64", "float16", "bfloat16"])
def test_backward_casts_the_leaf_gradient(want):
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = getattr(tl, want)
        (x * 3).sum().backward()
        first = _g(x.grad)
        (x * 2).sum().backward()          # accumulates in grad_dtype
        return first, _g(x.grad), str(x.grad_dtype).split(".")[-1]
    assert _same(run)[0] == "ok"


def test_set_after_the_graph_is_built_and_changed_again():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        y = (x * 2).sum()
        x.grad_dtype = tl.float16
        y.backward()
        return _g(x.grad)
    assert _same(run) == ("ok", ("float16", [2.0, 2.0]))


def test_none_keeps_a_mixed_dtype_gradient():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = None
        w = tl.tensor([3.0, 4.0], dtype=tl.float64)
        (x * w).sum().backward()
        return _g(x.grad), x.grad_dtype
    assert _same(run) == ("ok", (("float64", [3.0, 4.0]), None))


def test_float64_keeps_a_float64_gradient_exact():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        w = tl.tensor([3.0, 4.0], dtype=tl.float64) + 1e-12     # not representable in float32
        (x * w).sum().backward()
        return _g(x.grad)
    out = _same(run)
    np.testing.assert_array_equal(out[1][1], np.array([3.0, 4.0]) + 1e-12)


def test_hooks_and_autograd_grad_see_the_cast():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float16
        seen = []
        x.register_hook(lambda g: seen.append(str(g.dtype).split(".")[-1]))
        got, = tl.autograd.grad((x * 2).sum(), x)
        return seen, _g(got)
    assert _same(run) == ("ok", (["float16"], ("float16", [2.0, 2.0])))


def test_a_leaf_as_the_root():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        x.backward(tl.ones(2))
        return _g(x.grad)
    assert _same(run) == ("ok", ("float64", [1.0, 1.0]))


def test_assigning_grad_checks_grad_dtype():
    def wrong(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        x.grad = tl.ones(2)

    def wrong_default(tl):
        _leaf(tl).grad = tl.ones(2, dtype=tl.float64)

    def right(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        x.grad = tl.ones(2, dtype=tl.float64)
        return _g(x.grad)

    def any_(tl):
        x = _leaf(tl)
        x.grad_dtype = None
        x.grad = tl.ones(2, dtype=tl.float16)
        return _g(x.grad)
    assert _same(wrong)[0] == "RuntimeError"
    assert _same(wrong_default)[0] == "RuntimeError"
    assert _same(right) == ("ok", ("float64", [1.0, 1.0]))
    assert _same(any_) == ("ok", ("float16", [1.0, 1.0]))


def test_refusals():
    def non_leaf_get(tl):
        return (_leaf(tl) * 2).grad_dtype

    def non_leaf_set(tl):
        (_leaf(tl) * 2).grad_dtype = tl.float64

    def not_a_dtype(tl):
        _leaf(tl).grad_dtype = "float64"

    def existing_grad(tl):
        x = _leaf(tl)
        (x * 2).sum().backward()
        x.grad_dtype = tl.float64

    for fn in (non_leaf_get, non_leaf_set, not_a_dtype, existing_grad):
        assert _same(fn)[0] == "RuntimeError"


def test_what_keeps_and_resets_it():
    def run(tl):
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        (x * 2).sum().backward()
        x.grad_dtype = None                       # None is allowed with a gradient
        none_kept = x.grad_dtype
        y = _leaf(tl)
        y.grad_dtype = tl.float64
        y.requires_grad_(False)
        kept = str(y.grad_dtype).split(".")[-1]
        y.data = tl.zeros(2, dtype=tl.float16)
        after_data = str(y.grad_dtype).split(".")[-1]
        return none_kept, kept, after_data, str(y.detach().grad_dtype).split(".")[-1]
    assert _same(run) == ("ok", (None, "float64", "float64", "float16"))


def test_a_non_floating_grad_dtype_fails_at_the_backward():
    x = _leaf(dt)
    x.grad_dtype = dt.int64          # accepted, as in PyTorch (whose engine then asserts)
    with pytest.raises(RuntimeError, match="grad_dtype"):
        (x * 2).sum().backward()


def test_a_custom_function_between_mixed_dtypes():
    # the cast branch for a gradient whose dtype differs from a node input's
    def run(tl):
        class Double(tl.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = _leaf(tl)
        x.grad_dtype = tl.float64
        w = tl.tensor([1.0, 3.0], dtype=tl.float64)
        (Double.apply(x * 1) * w).sum().backward()
        return _g(x.grad)
    assert _same(run) == ("ok", ("float64", [2.0, 6.0]))       # 2 * w
