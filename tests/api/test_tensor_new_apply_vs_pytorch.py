"""Tensor.new, new_empty_strided, apply_, map_, narrow_copy, hardshrink and prelu against
PyTorch 2.13: values, dtypes, shapes, strides, aliasing, and the error class and text."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

DTYPES = ["float32", "float64", "int64"]


def _both(make):
    return make(torch), make(dt)


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _base(lib, dtype):
    return lib.arange(12, dtype=getattr(lib, dtype)).reshape(3, 4) - 5


# -- new -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", [(), (2, 3), (5,), (0,), ([1, 2, 3],), ([[1, 2], [3, 4]],),
                                  ((1, 2),), ((),)])
def test_new_shapes_and_data(dtype, args):
    t, d = _both(lambda lib: _base(lib, dtype))
    a, b = t.new(*args), d.new(*args)
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert a.requires_grad == b.requires_grad is False
    if args and isinstance(args[0], list):
        _same(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_new_from_size_and_tensor(dtype):
    t, d = _both(lambda lib: _base(lib, dtype))
    assert tuple(t.new(t.shape).shape) == tuple(d.new(d.shape).shape) == (3, 4)
    o_t, o_d = t[0].clone(), d[0].clone()
    n_t, n_d = t.new(o_t), d.new(o_d)
    _same(n_t, n_d)
    assert (n_t.data_ptr() == o_t.data_ptr()) == (n_d.data_ptr() == o_d.data_ptr()) is True


def test_new_tensor_of_another_dtype_is_a_type_error():
    with pytest.raises(TypeError):
        torch.zeros(2).new(torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        dt.zeros(2).new(dt.tensor([1, 2]))


# -- new_empty_strided ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size,stride", [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 0), (1, 2)),
                                         ((4,), (2,)), ((), ())])
def test_new_empty_strided(dtype, size, stride):
    t, d = _both(lambda lib: _base(lib, dtype))
    a, b = t.new_empty_strided(size, stride), d.new_empty_strided(size, stride)
    assert tuple(a.shape) == tuple(b.shape) == size
    assert tuple(a.stride()) == tuple(b.stride())
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    c = d.new_empty_strided(size, stride, dtype=dt.float64)
    assert c.dtype is dt.float64
    assert d.new_empty_strided(size, stride, dtype=dt.float64, requires_grad=True).requires_grad == \
        t.new_empty_strided(size, stride, dtype=torch.float64, requires_grad=True).requires_grad


# -- apply_ / map_ --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [lambda v: v * 3 - 1, lambda v: v / 2, lambda v: abs(v) ** 0.5,
                                lambda v: 7])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_apply_(dtype, fn, layout):
    def make(lib):
        x = _base(lib, dtype)
        return {"contiguous": x, "transposed": x.t(), "sliced": x[:, 1::2]}[layout]
    t, d = _both(make)
    rt, rd = t.apply_(fn), d.apply_(fn)
    assert rt is t and rd is d
    _same(t, d)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("other_shape", [(3, 4), (4,), (1, 4), (3, 1), ()])
def test_map_(dtype, other_shape):
    def make(lib):
        x = _base(lib, dtype)
        o = (lib.arange(12, dtype=getattr(lib, dtype)).reshape(3, 4) * 2)
        o = o.reshape(-1)[:int(np.prod(other_shape))].reshape(other_shape)
        return x, o
    (xt, ot), (xd, od) = _both(make)
    fn = lambda a, b: a * 10 + b  # noqa: E731
    assert xt.map_(ot, fn) is xt and xd.map_(od, fn) is xd
    _same(xt, xd)


@pytest.mark.parametrize("name,args", [("apply_", (lambda v: v,)),
                                       ("map_", (None, lambda a, b: a))])
def test_apply_map_refuse_requires_grad(name, args):
    msgs = []
    for lib in (torch, dt):
        x = lib.ones(3, requires_grad=True)
        a = tuple(x if v is None else v for v in args)
        with pytest.raises(RuntimeError) as e:
            getattr(x, name)(*a)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_map_other_dtype_is_a_type_error():
    for lib in (torch, dt):
        with pytest.raises(TypeError, match="map_"):
            lib.ones(2, dtype=lib.int64).map_(lib.ones(2), lambda a, b: a)


# -- narrow_copy ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim,start,length", [(0, 1, 2), (1, 0, 3), (-1, 2, 2), (0, 0, 0)])
def test_narrow_copy(dtype, dim, start, length):
    t, d = _both(lambda lib: _base(lib, dtype))
    a, b = t.narrow_copy(dim, start, length), d.narrow_copy(dim, start, length)
    _same(a, b)
    _same(torch.narrow_copy(t, dim, start, length), dt.narrow_copy(d, dim, start, length))
    b.fill_(99)                        # a copy: self is untouched
    _same(t, d)


def test_narrow_copy_errors():
    for lib in (torch, dt):
        with pytest.raises(RuntimeError):
            lib.zeros(2, 3).narrow_copy(2, 0, 1)
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.zeros(2, 3).narrow_copy(-3, 0, 1)


# -- hardshrink / prelu ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lambd", [None, 0.5, 1.5, 0.0])
def test_hardshrink_method(dtype, lambd):
    def run(lib):
        x = lib.tensor([-3.0, -1.5, -0.5, 0.0, 0.3, 0.5, 1.0, 2.5], dtype=getattr(lib, dtype),
                       requires_grad=True)
        y = x.hardshrink() if lambd is None else x.hardshrink(lambd)
        y.sum().backward()
        return y, x.grad
    (yt, gt), (yd, gd) = run(torch), run(dt)
    _same(yt, yd)
    _same(gt, gd)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("wshape", [(1,), (3,)])
def test_prelu_method(dtype, wshape):
    def run(lib):
        x = (lib.arange(24, dtype=getattr(lib, dtype)).reshape(2, 3, 4) - 11).requires_grad_()
        w = lib.tensor([0.25, -0.5, 2.0][:wshape[0]], dtype=getattr(lib, dtype),
                       requires_grad=True)
        y = x.prelu(w)
        (y * y).sum().backward()
        return y, x.grad, w.grad
    for a, b in zip(run(torch), run(dt)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def test_prelu_method_errors():
    msgs = []
    for lib in (torch, dt):
        with pytest.raises(RuntimeError) as e:
            lib.ones(2, 3, 4).prelu(lib.ones(2))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
