"""dispatchtorch.save writes PyTorch's own checkpoint format: real PyTorch's torch.load
reads it (weights_only=True and False) with the same values, dtypes, shapes, strides,
storage sharing, requires_grad and Parameter-ness, and the archive is PyTorch's own byte
for byte (the same objects saved by torch.save give the same bytes)."""
from __future__ import annotations

import collections
import io
import os
import pathlib
import pickle
import zipfile

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import _dtype as D
from dispatchtorch import nn

torch = pytest.importorskip("torch")

DTYPES = list(D.BY_NAME)            # every dtype dispatchtorch has; PyTorch has them all


def _ours(obj, **kw):
    buf = io.BytesIO()
    dt.save(obj, buf, **kw)
    return buf.getvalue()


def _theirs(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def _pt(data, weights_only=True):
    return torch.load(io.BytesIO(data), weights_only=weights_only)


def _bytes_of(t):
    """A tensor's values as raw bytes in row-major order (float8 has no numpy in PyTorch)."""
    if isinstance(t, torch.Tensor):
        return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return np.ascontiguousarray(t.detach().cpu()._host()).tobytes()


def _values(n, name):
    """n values of dtype `name`, here and in PyTorch (the same bits)."""
    ours = (dt.arange(n) % 5 - 1).to(getattr(dt, name)) if name != "bool" else dt.arange(n) % 2 == 0
    if name.startswith("uint"):
        ours = (dt.arange(n) % 5).to(getattr(dt, name))
    return ours


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("weights_only", [True, False])
def test_every_dtype_and_shape_loads_in_pytorch(name, weights_only):
    for shape in ((), (0,), (5,), (2, 0, 3), (2, 3, 4)):
        n = int(np.prod(shape))
        t = _values(n, name).reshape(shape)
        got = _pt(_ours(t), weights_only)
        assert got.dtype is getattr(torch, name) and tuple(got.shape) == shape
        assert got.stride() == t.stride() and got.storage_offset() == 0
        assert _bytes_of(got) == _bytes_of(t)
    # a non-contiguous view keeps its storage, offset and strides
    base = _values(24, name).reshape(4, 6)
    view = base.T[1:5:2]
    got = _pt(_ours({"view": view, "base": base}), weights_only)
    assert got["view"].stride() == view.stride() and got["view"].storage_offset() == view.storage_offset()
    assert got["view"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    assert _bytes_of(got["view"]) == _bytes_of(view)


def _pair():
    """The same checkpoint built here and in PyTorch: views, a parameter, a frozen
    parameter, every dtype, 0-d, empty, and plain values around them."""
    def build(lib, param):
        x = lib.arange(12.0).reshape(3, 4)
        out = collections.OrderedDict()
        out["x"], out["row"], out["col"], out["t"] = x, x[1], x[:, 2], x.T
        out["w"] = param(lib.ones(2, 3))
        out["frozen"] = param(lib.zeros(1), requires_grad=False)
        out["grad"] = lib.ones(2).requires_grad_(True)
        out["scalar"], out["empty"] = lib.tensor(3.5), lib.empty(0, 4)
        for name in DTYPES:
            out[name] = lib.zeros(3, dtype=getattr(lib, name))
        out["meta"] = {"epoch": 3, "lr": 0.5, "name": "run", "none": None, "flags": (True, False),
                       "dtype": lib.float16, "device": lib.device("cpu"),
                       "cuda": lib.device("cuda", 1), "size": lib.Size([2, 3]), "nested": [[1], {}]}
        return out
    return build(dt, nn.Parameter), build(torch, torch.nn.Parameter)


def test_archives_are_pytorchs_byte_for_byte(tmp_path):
    ours, theirs = _pair()
    assert _ours(ours) == _theirs(theirs)
    assert _ours(ours, _disable_byteorder_record=True) == \
        _theirs(theirs, _disable_byteorder_record=True)
    # protocol 4 memoizes strings by identity, which differ from PyTorch's objects: the
    # same archive up to the pickle's memo, read by PyTorch as its own (its weights-only
    # unpickler knows protocol 2 only, so weights_only=False for both)
    proto4 = _ours(ours, pickle_protocol=4)
    assert zipfile.ZipFile(io.BytesIO(proto4)).read("archive/data.pkl")[:2] == b"\x80\x04"
    _same(_pt(proto4, False), _pt(_theirs(theirs, pickle_protocol=4), False))
    assert dt.load(io.BytesIO(proto4))["x"].tolist() == ours["x"].tolist()
    # a path names the archive's folder after the file (here "model.v1")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    dt.save(ours, tmp_path / "a" / "model.v1.pt")
    torch.save(theirs, tmp_path / "b" / "model.v1.pt")
    a, b = (tmp_path / "a" / "model.v1.pt").read_bytes(), (tmp_path / "b" / "model.v1.pt").read_bytes()
    assert a == b and zipfile.ZipFile(io.BytesIO(a)).namelist()[0] == "model.v1/data.pkl"
    # many records: the serialization id follows PyTorch's record-name hash through rehashes
    many = {f"p{i}": dt.full((2,), float(i)) for i in range(60)}
    assert _ours(many) == _theirs({f"p{i}": torch.full((2,), float(i)) for i in range(60)})


def _same(a, b):
    """a (PyTorch's load of our file) equals b (PyTorch's load of PyTorch's file)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, torch.Tensor):
        assert (a.dtype, a.shape, a.stride(), a.storage_offset(), a.requires_grad) == \
            (b.dtype, b.shape, b.stride(), b.storage_offset(), b.requires_grad)
        if a.device.type != "meta":
            assert _bytes_of(a) == _bytes_of(b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("weights_only", [True, False])
def test_pytorch_reads_ours_as_its_own(weights_only):
    ours, theirs = _pair()
    a, b = _pt(_ours(ours), weights_only), _pt(_theirs(theirs), weights_only)
    _same(a, b)
    assert type(a["w"]) is torch.nn.Parameter and a["w"].requires_grad
    assert type(a["frozen"]) is torch.nn.Parameter and not a["frozen"].requires_grad
    assert a["grad"].requires_grad and type(a["grad"]) is torch.Tensor
    ptr = a["x"].untyped_storage().data_ptr()       # one storage for x and its views
    assert all(a[k].untyped_storage().data_ptr() == ptr for k in ("row", "col", "t"))
    a["x"][1, 2] = -1.0
    assert a["row"][2].item() == -1.0 and a["col"][1].item() == -1.0


def test_legacy_format_loads_in_pytorch_and_here():
    x = dt.arange(6.0).reshape(2, 3)
    obj = {"x": x, "col": x[:, 1], "p": nn.Parameter(dt.ones(2)), "i": dt.tensor([1, 2]),
           "c": dt.tensor([1 + 2j]), "b": dt.tensor([True]), "h": dt.ones(1, dtype=dt.bfloat16)}
    data = _ours(obj, _use_new_zipfile_serialization=False)
    assert not data.startswith(b"PK")
    got = _pt(data)
    assert got["col"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    assert got["col"].stride() == (3,) and got["col"].tolist() == [1.0, 4.0]
    assert type(got["p"]) is torch.nn.Parameter and got["c"].tolist() == [1 + 2j]
    assert got["h"].dtype is torch.bfloat16 and got["b"].tolist() == [True]
    back = dt.load(io.BytesIO(data))
    assert back["x"].tolist() == x.tolist() and isinstance(back["p"], nn.Parameter)
    # PyTorch's legacy loader cannot read uint16..64 / float8 storages: refused up front
    with pytest.raises(RuntimeError, match="legacy format"):
        _ours({"u": dt.zeros(2, dtype=dt.uint16)}, _use_new_zipfile_serialization=False)


def test_sparse_and_meta_tensors_load_in_pytorch():
    coo = dt.sparse_coo_tensor(dt.tensor([[0, 2, 2], [1, 0, 3]]), dt.tensor([1.0, 2.0, 3.0]), (3, 4))
    csr = dt.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
    meta = dt.empty(2, 3, device="meta")
    data = _ours({"coo": coo, "csr": csr, "meta": meta, "coalesced": coo.coalesce()})
    got = _pt(data)
    assert got["coo"].layout is torch.sparse_coo and got["csr"].layout is torch.sparse_csr
    assert got["coo"].to_dense().tolist() == coo.to_dense().tolist()
    assert got["csr"].to_dense().tolist() == csr.to_dense().tolist()
    assert not got["coo"].is_coalesced() and got["coalesced"].is_coalesced()
    assert got["meta"].device.type == "meta" and got["meta"].shape == (2, 3)
    back = dt.load(io.BytesIO(data))
    assert back["csr"].to_dense().tolist() == csr.to_dense().tolist()
    assert back["meta"].device.type == "meta"


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.LayerNorm(8),
                             lib.nn.Linear(8, 3))


def test_a_model_trained_here_gives_the_same_outputs_in_pytorch(tmp_path):
    dt.manual_seed(0)
    model = _mlp(dt)
    opt = dt.optim.Adam(model.parameters(), lr=0.01)
    x = dt.randn(16, 4)
    y = dt.randint(0, 3, (16,))
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    path = tmp_path / "trained.pt"
    dt.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 5}, path)
    ck = torch.load(path)                       # weights_only=True, PyTorch's default
    twin = _mlp(torch)
    twin.load_state_dict(ck["model"])
    probe = np.random.default_rng(1).standard_normal((7, 4)).astype(np.float32)
    with torch.no_grad():
        theirs = twin(torch.from_numpy(probe)).numpy()
    ours = model(dt.tensor(probe)).detach().numpy()
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)
    # the optimizer's state goes into PyTorch's Adam as its own
    topt = torch.optim.Adam(twin.parameters(), lr=0.01)
    topt.load_state_dict(ck["optimizer"])
    state = topt.state_dict()["state"]
    for i, p in enumerate(opt.state_dict()["state"].values()):
        np.testing.assert_array_equal(state[i]["exp_avg"].numpy(), p["exp_avg"].numpy())
        assert float(state[i]["step"]) == float(p["step"])
    assert topt.param_groups[0]["lr"] == 0.01 and ck["epoch"] == 5


def test_targets_and_the_load_here(tmp_path):
    sd = {"w": dt.arange(4.0)}
    targets = [str(tmp_path / "s.pt"), tmp_path / "p.pt"]
    for target in targets:
        dt.save(sd, target)
        assert torch.load(target)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert dt.load(target)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert zipfile.ZipFile(targets[1]).namelist()[0] == "p/data.pkl"
    with open(tmp_path / "f.pt", "wb") as fh:      # a file object: folder "archive"
        dt.save(sd, fh)
    assert zipfile.ZipFile(tmp_path / "f.pt").namelist()[0] == "archive/data.pkl"
    assert torch.load(tmp_path / "f.pt")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(AttributeError, match="file-like object with a 'write' attribute"):
        dt.save(sd, 42)
    # a save that fails half way leaves the previous file whole
    before = pathlib.Path(targets[1]).read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        dt.save({"w": dt.ones(1), "f": lambda: 0}, targets[1])
    assert pathlib.Path(targets[1]).read_bytes() == before
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_whole_objects_are_pickled_by_reference():
    """A Module pickles as a reference to dispatchtorch's class: PyTorch's weights-only
    load refuses it naming that class; here it loads with weights_only=False."""
    model = _mlp(dt)
    data = _ours(model)
    with pytest.raises(pickle.UnpicklingError, match="dispatchtorch.nn.modules.container.Sequential"):
        _pt(data)
    with pytest.raises(pickle.UnpicklingError, match="dispatchtorch.nn.modules.container.Sequential"):
        dt.load(io.BytesIO(data))
    back = dt.load(io.BytesIO(data), weights_only=False)
    x = dt.randn(2, 4)
    np.testing.assert_array_equal(back(x).detach().numpy(), model(x).detach().numpy())


def test_what_pytorch_refuses_to_save_is_refused():
    a = dt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        _ours(a * 2)
    x = dt.zeros(4, dtype=dt.int32)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        _ours([x, x.view(dt.float32)])
    z = torch.zeros(4, dtype=torch.int32)              # as PyTorch refuses it
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        torch.save([z, z.view(torch.float32)], io.BytesIO())
    with pytest.raises(NotImplementedError, match="pickle_module"):
        dt.save(x, io.BytesIO(), pickle_module=type("M", (), {"Pickler": object}))


def test_a_storage_saved_alone():
    t = dt.arange(4, dtype=dt.int32)
    tt = torch.arange(4, dtype=torch.int32)
    for save, obj in ((_ours, {"u": t.untyped_storage(), "t": t}),
                      (_theirs, {"u": tt.untyped_storage(), "t": tt})):
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            save(obj)
    only = _ours(t.untyped_storage())
    assert only == _theirs(torch.arange(4, dtype=torch.int32).untyped_storage())
    assert _pt(only).nbytes() == 16 and dt.load(io.BytesIO(only)).nbytes() == 16


@pytest.mark.skipif(not dt.opencl.is_available(), reason="no OpenCL device")
def test_opencl_tensors_are_saved_at_the_cpu_location():
    t = dt.arange(6.0, device="opencl").reshape(2, 3)
    data = _ours({"t": t, "col": t[:, 1]})
    got = _pt(data)
    assert got["t"].device.type == "cpu" and got["col"].tolist() == [1.0, 4.0]
    assert got["col"].untyped_storage().data_ptr() == got["t"].untyped_storage().data_ptr()
    assert dt.load(io.BytesIO(data))["t"].device.type == "cpu"
    back = dt.load(io.BytesIO(data), map_location="opencl")
    assert back["t"].device.type == "opencl" and back["col"].cpu().tolist() == [1.0, 4.0]


def test_zip64_fields_read_by_pytorch(monkeypatch):
    """Records or offsets past 4 GiB get miniz's zip64 fields; with the limit lowered to
    100 bytes the same code paths write an archive PyTorch and zipfile still read."""
    from dispatchtorch._pytorch_files import zip_writer
    monkeypatch.setattr(zip_writer, "ZIP32_LIMIT", 100)
    data = _ours({"big": dt.arange(50.0), "small": dt.ones(3)})
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    got = _pt(data)
    assert got["big"].tolist() == list(range(50)) and got["small"].tolist() == [1.0] * 3
    assert dt.load(io.BytesIO(data))["big"].tolist() == list(range(50))


def test_damaged_archives_raise():
    data = _ours({"w": dt.arange(100.0)})
    with pytest.raises(RuntimeError, match="corrupted zip checkpoint"):
        dt.load(io.BytesIO(data[: len(data) // 2]))


def test_locations_are_pytorchs_tags():
    """PyTorch's location_tag: "cpu", "cuda:<index>" (index 0 when unset); OpenCL, which
    PyTorch lacks, is saved as "cpu"."""
    from dispatchtorch._pytorch_files.pickler import location
    assert location(dt.device("cpu")) == "cpu"
    assert location(dt.device("cuda", 1)) == "cuda:1" and location(dt.device("cuda")) == "cuda:0"
    assert location(dt.device("opencl")) == "cpu"


def test_a_conjugate_view_is_saved_as_its_values():
    c = dt.tensor([1 + 2j, 3 - 1j]).conj()
    got = _pt(_ours({"c": c}))
    assert got["c"].tolist() == [1 - 2j, 3 + 1j] and not got["c"].is_conj()


def test_detached_views_of_one_storage_are_saved_whole():
    """A detached view knows only its own extent; the saved storage covers what every
    saved tensor over that memory reaches (PyTorch saves the whole storage)."""
    x = dt.arange(10.0)
    a, b = x[2:4].detach(), x[5:].detach()
    got = _pt(_ours([a, x, b]))
    assert [t.tolist() for t in got] == [[2.0, 3.0], list(range(10)), [5.0, 6.0, 7.0, 8.0, 9.0]]
    assert len({t.untyped_storage().data_ptr() for t in got}) == 1
    got = _pt(_ours([a, b]))                      # without x: as far as b reaches
    assert got[0].untyped_storage().data_ptr() == got[1].untyped_storage().data_ptr()
    assert got[1].storage_offset() == 5 and got[1].untyped_storage().nbytes() == 40


def test_saving_needs_no_pytorch(tmp_path):
    """The torch globals are written by name: a process where `import torch` fails saves a
    file that PyTorch then loads."""
    import subprocess
    import sys
    path = tmp_path / "no_torch.pt"
    code = ("import sys; sys.modules['torch'] = None\n"
            "import dispatchtorch as dt\n"
            "x = dt.arange(6.0).reshape(2, 3)\n"
            f"dt.save({{'x': x, 'col': x[:, 1], 'p': dt.nn.Parameter(dt.ones(2)), "
            f"'d': dt.float16}}, {str(path)!r})\n"
            "assert sys.modules['torch'] is None\n")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    got = torch.load(path)
    assert got["col"].tolist() == [1.0, 4.0] and got["d"] is torch.float16
    assert type(got["p"]) is torch.nn.Parameter
