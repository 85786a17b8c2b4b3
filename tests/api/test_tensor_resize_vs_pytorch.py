"""Tensor.resize_ / resize_as_ / as_strided_ and the deprecated resize / resize_as against
PyTorch 2.13: shapes, strides, offsets, the kept data prefix, aliasing with views made
before, versions, gradients, and the error classes. (Elements a resize_ adds are
uninitialised in both libraries: only the kept prefix is compared.)"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

DTYPES = ["float32", "float64", "int64"]


def _geometry(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def _err_class(fn):
    classes = []
    for lib in (torch, dt):
        with pytest.raises(Exception) as e:
            fn(lib)
        classes.append(type(e.value))
    assert classes[0] is classes[1], classes


def _start(lib, dtype, layout):
    t = lib.arange(24, dtype=getattr(lib, dtype)).reshape(4, 6)
    if layout == "transposed":
        return t.t()
    if layout == "offset":
        return t[1:, 2:]
    return t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "offset"])
@pytest.mark.parametrize("size", [(2, 3), (24,), (3, 8), (1, 2, 2), (0,), (), (5, 5), (30,)])
def test_resize_geometry_and_kept_prefix(dtype, layout, size):
    results = []
    for lib in (torch, dt):
        t = _start(lib, dtype, layout)
        room = 24 - t.storage_offset()          # the storage's elements from the offset on
        r = t.resize_(size) if len(size) != 1 else t.resize_(*size)
        assert r is t
        n = min(int(np.prod(size)), room)
        results.append((_geometry(t), t.reshape(-1)[:n].tolist() if n else []))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_resize_shrink_keeps_aliasing_with_earlier_views(dtype):
    out = []
    for lib in (torch, dt):
        base = lib.arange(10, dtype=getattr(lib, dtype))
        view = base[:4]
        base.resize_(3)
        base.fill_(7)
        base.resize_(10)            # back within the storage: the old elements are still there
        out.append((view.tolist(), base[3:].tolist()))
    assert out[0] == out[1]


def test_resize_versions_and_same_size_noop():
    for lib in (torch, dt):
        t = lib.ones(2, 3)
        v = t._version
        t.resize_(2, 3)             # the same sizes: untouched, no bump
        assert t._version == v
        s = lib.arange(6.).reshape(2, 3).t()
        s.resize_(3, 2)             # non-contiguous, same sizes: strides kept
        assert tuple(s.stride()) == (1, 3)
        t.resize_(6)
        assert t._version == v + 1


def test_resize_as_():
    for dtype in DTYPES:
        results = []
        for lib in (torch, dt):
            t = lib.arange(6, dtype=getattr(lib, dtype))
            template = lib.ones(3, 4).t()
            r = t.resize_as_(template)
            f = lib.resize_as_(lib.arange(3, dtype=getattr(lib, dtype)), lib.ones(2, 2))
            results.append((_geometry(r), r.reshape(-1)[:6].tolist(), _geometry(f),
                            f.reshape(-1)[:3].tolist()))
        assert results[0] == results[1]


def test_resize_errors():
    _err_class(lambda lib: lib.ones(2, requires_grad=True).resize_(3))
    _err_class(lambda lib: (lib.ones(2, requires_grad=True) * 2).resize_(2, 1))
    _err_class(lambda lib: lib.ones(2).resize_(-1))
    _err_class(lambda lib: lib.ones(2).resize_(2.0))
    _err_class(lambda lib: lib.ones(2).resize_())
    _err_class(lambda lib: lib.ones(2).resize_as_([1, 2]))
    _err_class(lambda lib: lib.ones(2, requires_grad=True).resize_as_(lib.ones(3)))
    with torch.no_grad(), dt.no_grad():            # requires_grad refuses in no_grad too
        _err_class(lambda lib: lib.ones(2, requires_grad=True).resize_(3))
    for lib in (torch, dt):
        t = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            t.resize_(4)


def test_growing_an_aliased_storage_refuses_here():
    """PyTorch moves every alias of a storage to the reallocated one; a dispatchtorch
    storage cannot follow, so growing one that another live tensor aliases raises (the
    one documented difference). Once the aliases are gone it grows as in PyTorch."""
    base = dt.zeros(3)
    view = base[1:]
    with pytest.raises(NotImplementedError, match="resize_: growing a storage"):
        view.resize_(5)             # its base is alive
    with pytest.raises(NotImplementedError, match="resize_: growing a storage"):
        base.resize_(5)             # a view of it is alive
    detached = base.detach()
    del view
    with pytest.raises(NotImplementedError, match="resize_: growing a storage"):
        base.resize_(5)
    del detached
    base.resize_(5)
    assert base[:3].tolist() == [0.0, 0.0, 0.0]
    v = dt.zeros(6)[1:]
    v.resize_(5)                    # within the storage: fine whoever aliases it
    assert _geometry(v) == ((5,), (1,), 1)


def test_numpy_storage_does_not_grow():
    for lib in (torch, dt):
        t = lib.from_numpy(np.zeros(3))
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            t.resize_(5)
        t.resize_(2)
        assert tuple(t.shape) == (2,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", [((2, 2), (1, 2), 1), ((3,), (2,), None), ((2, 3), (3, 1), 0),
                                  ((0,), (1,), 5)])
def test_as_strided_inplace(dtype, args):
    out = []
    for lib in (torch, dt):
        x = lib.arange(6, dtype=getattr(lib, dtype))
        r = x.as_strided_(*args)
        assert r is x
        out.append((_geometry(x), x.tolist()))
    assert out[0] == out[1]
    out = []
    for lib in (torch, dt):         # torch.as_strided_, on a view (offsets are the storage's)
        x = lib.arange(8, dtype=getattr(lib, dtype))[2:]
        lib.as_strided_(x, (2, 2), (2, 1), 3)
        out.append((_geometry(x), x.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_as_strided_inplace_gradient(dtype):
    grads = []
    for lib in (torch, dt):
        a = lib.arange(6, dtype=getattr(lib, dtype)).requires_grad_()
        b = a * 3
        b.as_strided_((2, 2), (1, 2), 1)
        assert not b.is_leaf
        (b * lib.arange(4, dtype=b.dtype).reshape(2, 2)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_as_strided_inplace_errors():
    _err_class(lambda lib: lib.ones(4, requires_grad=True).as_strided_((2,), (1,)))
    _err_class(lambda lib: lib.ones(4, requires_grad=True)[:2].as_strided_((2,), (1,)))
    _err_class(lambda lib: lib.arange(4.).as_strided_((3,), (2,)))
    _err_class(lambda lib: lib.ones(4).as_strided_((2,), (1, 1)))
    for lib in (torch, dt):         # no_grad: a leaf that requires grad may be restrided
        q = lib.ones(4, requires_grad=True)
        with (torch.no_grad() if lib is torch else dt.no_grad()):
            q.as_strided_((2,), (2,))
        assert tuple(q.shape) == (2,) and q.requires_grad and q.is_leaf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_deprecated_resize_values_gradient_and_warning(dtype):
    out = []
    for lib in (torch, dt):
        q = lib.arange(6, dtype=getattr(lib, dtype)).requires_grad_()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = q.resize(2, 3)
            s = q.resize_as(lib.ones(3, 2))
        assert [str(x.message) for x in w] == ["non-inplace resize is deprecated",
                                               "non-inplace resize_as is deprecated"]
        (r * lib.arange(6, dtype=r.dtype).reshape(2, 3)).sum().backward()
        t = lib.arange(6, dtype=getattr(lib, dtype)).reshape(2, 3).t()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nc = t.resize(6)
        out.append((r.tolist(), tuple(s.shape), q.grad.tolist(), nc.tolist(),
                    r.data_ptr() == q.data_ptr()))
    assert out[0] == out[1]


def test_deprecated_resize_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _err_class(lambda lib: lib.arange(6.).resize(4))
        _err_class(lambda lib: lib.arange(6.).resize([2, 3]))
        msgs = []
        for lib in (torch, dt):
            with pytest.raises(RuntimeError) as e:
                lib.arange(6.).resize(4)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
