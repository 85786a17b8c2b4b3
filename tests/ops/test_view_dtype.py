"""Tensor.view(dtype) against PyTorch 2.13: every pair of dtypes on contiguous and
sliced tensors gives torch's sizes, strides, offset and bits; bad geometry gets torch's
message; the view aliases its source (writes both ways, one version counter) and is
not differentiable."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]
rng = np.random.default_rng(5)


def _pair(shape, name="float32"):
    """The same bits as a dispatchtorch and a PyTorch tensor."""
    raw = rng.integers(0, 256, (*shape[:-1], shape[-1] * getattr(torch, name).itemsize),
                       dtype=np.uint8)
    t = torch.from_numpy(raw.copy()).view(getattr(torch, name))
    if name == "bool":                     # only 0 and 1 are bools
        t = t.to(torch.uint8).bitwise_and(1).to(torch.bool)
    ours = dt.tensor(t.view(torch.uint8).numpy()).view(getattr(dt, name))
    return ours, t


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    if theirs.dtype == torch.bool:         # bytes other than 0 and 1 are all True; a copy
        assert ours.tolist() == theirs.tolist()     # may store them as 1 (torch's does)
        return
    assert ours.contiguous().view(dt.uint8).numpy().tobytes() == \
        theirs.contiguous().view(torch.uint8).numpy().tobytes()


def _sliced(x):
    """Rows 1.. of a (4, 16) tensor, columns cut to a multiple of 8 elements."""
    return x[1:, 8:]


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("to", DTYPES)
def test_every_pair_as_pytorch(src, to):
    ours, theirs = _pair((4, 16), src)
    for cut in (lambda x: x, _sliced):
        a, b = cut(ours), cut(theirs)
        try:
            want = b.view(getattr(torch, to))
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                a.view(getattr(dt, to))
            assert str(got.value) == str(e)
            continue
        _same(a.view(getattr(dt, to)), want)
        _same(a.view(dtype=getattr(dt, to)), want)


@pytest.mark.parametrize("make", [
    lambda m: m.tensor(1.0), lambda m: m.ones(4, 6).t(), lambda m: m.ones(4, 6)[:, :5],
    lambda m: m.ones(4, 6)[:, 1:5], lambda m: m.ones(4, 6)[:, ::2], lambda m: m.ones(3),
    lambda m: m.ones(3, 3)[:, :2], lambda m: m.ones(100).as_strided((4,), (2,), 1),
    lambda m: m.ones(100).as_strided((3, 4), (3, 2), 0),
    lambda m: m.ones(100).as_strided((4, 4), (3, 1), 1)],
    ids=["0-dim", "transposed", "odd_last", "odd_offset", "stepped", "odd_numel",
         "odd_stride", "offset_and_step", "step_and_odd_stride", "offset_and_odd_stride"])
@pytest.mark.parametrize("to", ["float16", "float64"])
def test_bad_geometry_gets_pytorchs_message(make, to):
    try:
        want = make(torch).view(getattr(torch, to))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            make(dt).view(getattr(dt, to))
        assert str(got.value) == str(e)
    else:
        _same(make(dt).view(getattr(dt, to)), want)


def test_a_trailing_partial_element_of_the_storage_is_left_out():
    """5 float32 are 20 bytes; x[:4] viewed as float64 is 2 elements of the first 16."""
    x = dt.arange(5, dtype=dt.float32)
    got = x[:4].view(dt.float64)
    assert got.numpy().tobytes() == np.arange(4, dtype=np.float32).tobytes()


def test_the_view_aliases_its_source_and_shares_the_version_counter():
    x = dt.zeros(4)
    bits = x.view(dt.int32)
    bits[1] = 0x3F800000                       # 1.0f
    assert x.tolist() == [0.0, 1.0, 0.0, 0.0]
    x[2] = -2.0
    assert bits[2].item() == np.float32(-2.0).view(np.int32)
    assert x._version == bits._version == 2


def test_not_differentiable_and_a_write_through_it_trips_the_saved_check():
    y = dt.randn(4, requires_grad=True)
    w = dt.randn(4)
    loss = (y * w).sum()                       # w saved for y's gradient
    same = y.view(dt.float32)
    assert not same.requires_grad and same.grad_fn is None and same._base is None
    w.view(dt.int32).add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_a_conjugate_view_and_a_string_dtype_are_refused_as_pytorch():
    with pytest.raises(RuntimeError, match="not supported for conjugate view tensors"):
        dt.randn(3, dtype=dt.complex64).conj().view(dt.float32)
    with pytest.raises(TypeError, match=r"got \(str\)"):
        dt.ones(3).view("float16")
    with pytest.raises(TypeError, match=r"got \(torch.dtype, int\)"):
        dt.ones(3).view(dt.float16, 3)


def test_a_backend_without_reinterpret_refuses_by_name_and_keeps_same_dtype_views(monkeypatch):
    meta = dt.ones(4, device="meta")
    monkeypatch.setattr(type(meta._place.bk), "reinterpret", lambda self, storage, dtype: None)
    with pytest.raises(RuntimeError, match="view: the meta backend cannot view float32 memory "
                                           "as int32"):
        meta.view(dt.int32)
    x = dt.ones(4)
    same = x.view(dt.float32)
    same[1] = 5.0
    assert x.tolist() == [1.0, 5.0, 1.0, 1.0] and same._base is None
