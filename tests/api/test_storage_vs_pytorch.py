"""Storages against PyTorch 2.13: Tensor.untyped_storage / storage / set_ and the storage
classes give torch's sizes, bytes, values, aliasing and messages."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import _storage

torch = pytest.importorskip("torch")


def _both(values=(0.0, 1.5, -2.0, 3.25, 4.0, 5.5), dtype="float32", shape=(2, 3)):
    ours = dt.tensor(np.array(values, dtype=dtype).reshape(shape))
    theirs = torch.tensor(np.array(values, dtype=dtype).reshape(shape))
    return ours, theirs


def _message(fn):
    try:
        fn()
    except Exception as e:              # noqa: BLE001 (the class is compared by the caller)
        return type(e), str(e)
    return None


def test_untyped_storage_is_the_whole_storage_in_bytes():
    ours, theirs = _both()
    for a, b in ((ours, theirs), (ours[1], theirs[1]), (ours[:, 1:], theirs[:, 1:])):
        u, v = a.untyped_storage(), b.untyped_storage()
        assert (u.nbytes(), u.size(), len(u), u.element_size()) == \
               (v.nbytes(), v.size(), len(v), v.element_size())
        assert u.tolist() == v.tolist() and list(u) == list(v)
        assert u.data_ptr() == ours.data_ptr() and str(u.device) == str(v.device) == "cpu"
        assert repr(u) == repr(v)
    assert ours[1].untyped_storage() is ours.untyped_storage()      # one object, as torch's
    assert dt.ones(2).untyped_storage() is not ours.untyped_storage()


def test_bytes_read_and_write_through_to_the_tensor():
    ours, theirs = _both()
    for a in (ours, theirs):
        u = a.untyped_storage()
        u[0] = 7
        piece = u[4:8]
        piece[3] = 0x40                 # the high byte of element 1
        u[8:12] = 0
    assert ours.tolist() == theirs.tolist()
    assert ours.untyped_storage()[5] == theirs.untyped_storage()[5]
    for a, b in ((lambda: ours.untyped_storage()[30], lambda: theirs.untyped_storage()[30]),
                 (lambda: ours.untyped_storage()[-30], lambda: theirs.untyped_storage()[-30])):
        assert _message(a) == _message(b)


def test_typed_storage_warns_once_and_reads_elements_as_pytorch():
    ours, theirs = _both()
    _storage._WARNED[0] = False
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        s = ours.storage()
        ours.storage()
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        torch.storage._reset_warn_typed_storage_removal()
        t = theirs.storage()
    assert [str(w.message) for w in got] == [str(w.message) for w in want][:1]
    assert (s.size(), len(s), s.element_size(), s.nbytes()) == \
           (t.size(), len(t), t.element_size(), t.nbytes())
    assert s.tolist() == t.tolist() and s[3] == t[3] and type(s[3]) is type(t[3])
    assert s.type() == t.type() == "torch.FloatStorage" and s.pickle_storage_type() == "FloatStorage"
    assert isinstance(s, dt.FloatStorage) and not isinstance(s, dt.IntStorage)
    assert s.untyped() is ours.untyped_storage()
    assert s.double().tolist() == t.double().tolist() and s.int().tolist() == t.int().tolist()
    assert _message(lambda: s[0:2]) == _message(lambda: t[0:2])
    s[1] = 9.0
    assert ours[0, 1].item() == 9.0


def test_constructors_as_pytorch():
    assert dt.UntypedStorage().nbytes() == torch.UntypedStorage().nbytes() == 0
    assert dt.UntypedStorage(5).nbytes() == 5
    assert dt.UntypedStorage([1, 2, 250]).tolist() == torch.UntypedStorage([1, 2, 250]).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dt.FloatStorage([1, 2]).tolist() == torch.FloatStorage([1, 2]).tolist()
        assert dt.TypedStorage([1, 2], dtype=dt.int32).tolist() == \
            torch.TypedStorage([1, 2], dtype=torch.int32).tolist()
        assert dt.DoubleStorage(3).size() == 3 and dt.DoubleStorage(3).dtype is dt.float64
        assert repr(dt.ByteStorage([1, 2]).untyped()) == repr(torch.ByteStorage([1, 2]).untyped())
    assert _message(lambda: dt.UntypedStorage(3.5)) == _message(lambda: torch.UntypedStorage(3.5))
    ours = _message(lambda: dt.UntypedStorage(1, 2))
    theirs = _message(lambda: torch.UntypedStorage(1, 2))
    assert ours[0] is theirs[0] is TypeError
    assert ours[1].splitlines()[:4] == theirs[1].splitlines()[:4]
    assert dt.is_storage(dt.UntypedStorage(1)) and not dt.is_storage(dt.ones(1))


@pytest.mark.parametrize("form", ["tensor", "tensor_geometry", "untyped", "untyped_geometry",
                                  "typed", "empty"])
def test_set_points_the_tensor_at_the_source_as_pytorch(form):
    ours, theirs = _both(tuple(float(i) for i in range(12)), shape=(3, 4))

    def call(m, src):
        target = m.empty(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args = {"tensor": (src,), "tensor_geometry": (src, 2, (2, 3), (4, 1)),
                    "untyped": (src.untyped_storage(),),
                    "untyped_geometry": (src.untyped_storage(), 1, (5,), (2,)),
                    "typed": (src.storage(),), "empty": ()}[form]
            return target.set_(*args)
    a, b = call(dt, ours), call(torch, theirs)
    assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset() and a.tolist() == b.tolist()
    if form != "empty":                 # the same memory: a write shows in the source
        assert a.untyped_storage() is ours.untyped_storage()
        a.fill_(-3.0)
        b.fill_(-3.0)
        assert ours.tolist() == theirs.tolist()


def test_set_to_another_dtype_through_an_untyped_storage():
    ours, theirs = _both()
    a = dt.empty(0, dtype=dt.int16).set_(ours.untyped_storage())
    b = torch.empty(0, dtype=torch.int16).set_(theirs.untyped_storage())
    assert tuple(a.shape) == tuple(b.shape) == (12,) and a.tolist() == b.tolist()


@pytest.mark.parametrize("case", ["typed_dtype", "tensor_dtype", "offset", "an_int",
                                  "offset_without_size", "leaf"])
def test_set_refuses_as_pytorch(case):
    def call(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = m.ones(2)
            return {"typed_dtype": lambda: m.empty(0, dtype=m.float64).set_(x.storage()),
                    "tensor_dtype": lambda: m.empty(0).set_(m.zeros(2, dtype=m.float64)),
                    "offset": lambda: m.empty(0).set_(x.untyped_storage(), -1, (1,)),
                    "an_int": lambda: m.empty(0).set_(5),
                    "offset_without_size": lambda: m.empty(0).set_(x.untyped_storage(), 1),
                    "leaf": lambda: m.randn(3, requires_grad=True).set_(m.randn(3))}[case]()
    ours, theirs = _message(lambda: call(dt)), _message(lambda: call(torch))
    assert ours[0] is theirs[0]
    if ours[0] is TypeError:            # the overload list: the same first line
        assert ours[1].splitlines()[0] == theirs[1].splitlines()[0]
    else:
        assert ours[1] == theirs[1]


def test_what_a_fixed_size_storage_cannot_do_raises_by_name():
    x = dt.ones(2)
    with pytest.raises(NotImplementedError, match="set_: sizes \\[3\\].*PyTorch grows"):
        dt.empty(0).set_(x, 0, (3,))
    u = x.untyped_storage()
    assert u.resize_(8) is u
    with pytest.raises(NotImplementedError, match="resize_\\(0\\)"):
        u.resize_(0)
    with pytest.raises(NotImplementedError, match="pickling a UntypedStorage"):
        pickle.dumps(u)
    twin = copy.deepcopy(u)
    assert twin.tolist() == u.tolist() and twin.data_ptr() != u.data_ptr()


def test_a_write_through_a_set_tensor_trips_the_saved_tensor_check():
    """The set tensor shares the storage's version counter (PyTorch's keeps its own)."""
    w = dt.randn(3)
    y = dt.randn(3, requires_grad=True)
    loss = (y * w).sum()
    alias = dt.empty(0).set_(w)
    alias.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_opencl_storage_bytes_are_the_cpu_ones():
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    x = dt.arange(4, dtype=dt.float32, device="opencl")
    assert x.untyped_storage().tolist() == x.cpu().untyped_storage().tolist()


def test_a_backend_without_byte_access_still_gives_sizes_and_pointers(monkeypatch):
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    x = dt.ones(4, device="opencl")
    monkeypatch.setattr(type(x._place.bk), "reinterpret", lambda self, storage, dtype: None)
    u = x.untyped_storage()
    assert u.nbytes() == 16 and u.data_ptr() == x.data_ptr() and u.device.type == "opencl"
    with pytest.raises(RuntimeError, match="the opencl backend cannot view float32 memory as "
                                           "uint8"):
        u.tolist()
    y = dt.empty(0, device="opencl").set_(x, 1, (2,))
    assert y.tolist() == [1.0, 1.0] and y.untyped_storage() is u
