"""dispatchtorch.load of files written by PyTorch's own torch.save (zip and legacy
formats): values, dtypes, geometry, shared storage, parameters, map_location, optimizer
state, and malicious pickles refused without running them."""
from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import nn

torch = pytest.importorskip("torch")

FORMATS = [True, False]         # _use_new_zipfile_serialization: zip, legacy


def _np(t):
    return t.detach().cpu().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.storage_offset() == theirs.storage_offset()
    mine = ours.detach().float().numpy() if ours.dtype.name == "bfloat16" else ours.detach().numpy()
    np.testing.assert_array_equal(mine, _np(theirs))


def _saved(tmp_path, obj, zip_format=True, name="ck.pth"):
    path = tmp_path / name
    torch.save(obj, path, _use_new_zipfile_serialization=zip_format)
    return path


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                               torch.nn.Flatten(), torch.nn.Linear(12, 4))


def _our_model():
    return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 4))


@pytest.mark.parametrize("zip_format", FORMATS)
def test_a_models_state_dict_loads_into_our_model(tmp_path, zip_format):
    m = _model()
    m.train()
    m(torch.randn(2, 2, 4, 4))              # running stats and num_batches_tracked move
    sd = dt.load(_saved(tmp_path, m.state_dict(), zip_format))
    assert list(sd) == list(m.state_dict())
    for k, v in m.state_dict().items():
        _same(sd[k], v)
    assert sd["1.num_batches_tracked"].dtype is dt.int64 and sd["1.num_batches_tracked"].item() == 1
    ours = _our_model()
    ours.load_state_dict(sd)
    ours.eval(), m.eval()
    x = np.random.RandomState(0).randn(2, 2, 4, 4).astype(np.float32)
    np.testing.assert_allclose(ours(dt.tensor(x)).detach().numpy(),
                               m(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


DTYPES = ["float16", "bfloat16", "bool", "int8", "int16", "int32", "int64", "uint8",
          "complex64", "float64", "float32", "complex128"]


@pytest.mark.parametrize("zip_format", FORMATS)
def test_every_dtype_0d_and_empty(tmp_path, zip_format):
    g = torch.Generator().manual_seed(1)
    obj = {}
    for name in DTYPES:
        dtype = getattr(torch, name)
        base = torch.randn(3, 4, generator=g) * 50
        obj[name] = (base > 0) if name == "bool" else (
            torch.complex(base, -base) if dtype.is_complex else base).to(dtype)
        obj[name + "_0d"] = obj[name][1, 2].clone()
        obj[name + "_empty"] = obj[name][:0].clone()
    back = dt.load(_saved(tmp_path, obj, zip_format))
    for k, v in obj.items():
        _same(back[k], v)
    assert back["int32_0d"].dim() == 0 and back["float64_empty"].shape == (0, 4)


@pytest.mark.parametrize("zip_format", FORMATS)
def test_views_keep_their_geometry_and_share_one_storage(tmp_path, zip_format):
    base = torch.arange(24.).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "col": base[:, 2], "tail": base[2:, 3:],
           "step": base[::2, ::3]}
    back = dt.load(_saved(tmp_path, obj, zip_format))
    for k, v in obj.items():
        _same(back[k], v)
    assert not back["t"].is_contiguous()
    back["base"][2, 3] = -1.0                  # one storage, as saved: writes show everywhere
    assert back["tail"][0, 0].item() == -1.0 and back["col"][2].item() == 14.0
    assert back["t"][3, 2].item() == -1.0
    back["step"][1, 1] = 7.0
    assert back["base"][2, 3].item() == 7.0
    assert back["col"].untyped_storage() is back["base"].untyped_storage()


def test_parameters_requires_grad_and_nested_plain_values(tmp_path):
    p = torch.nn.Parameter(torch.ones(2, 3))
    frozen = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    leaf = torch.ones(3, requires_grad=True)
    obj = {"p": p, "frozen": frozen, "leaf": leaf, "tied": [p, p],
           "nested": {"a": [1, 2.5, None, "x", True], "b": (3, (4, "y")), "c": {"d": None}},
           "epoch": 7, "lr": 0.1, "name": "run", "dtype": torch.float16,
           "device": torch.device("cpu"), "size": torch.Size([2, 3]), "bytes": b"\x00\xff"}
    back = dt.load(_saved(tmp_path, obj))
    assert type(back["p"]) is nn.Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is nn.Parameter and not back["frozen"].requires_grad
    assert type(back["leaf"]) is dt.Tensor and back["leaf"].requires_grad
    assert back["tied"][0] is back["tied"][1] is back["p"]
    assert back["nested"] == obj["nested"] and back["epoch"] == 7 and back["lr"] == 0.1
    assert back["dtype"] is dt.float16 and back["device"] == dt.device("cpu")
    assert back["size"] == dt.Size([2, 3]) and back["bytes"] == b"\x00\xff"


@pytest.mark.parametrize("zip_format", FORMATS)
def test_adam_state_loads_and_keeps_stepping_as_pytorch(tmp_path, zip_format):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(m.parameters(), lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)
    x, y = torch.randn(5, 3), torch.randn(5, 2)

    def step_theirs():
        opt.zero_grad()
        torch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    for _ in range(3):
        step_theirs()
    path = _saved(tmp_path, {"model": m.state_dict(), "optim": opt.state_dict()}, zip_format)
    ck = dt.load(path)
    ours = nn.Linear(3, 2)
    ours.load_state_dict(ck["model"])
    our_opt = dt.optim.Adam(ours.parameters(), lr=0.5)
    our_opt.load_state_dict(ck["optim"])
    assert our_opt.param_groups[0]["lr"] == 0.01
    xo, yo = dt.tensor(x.numpy()), dt.tensor(y.numpy())
    for _ in range(3):
        step_theirs()
        our_opt.zero_grad()
        nn.functional.mse_loss(ours(xo), yo).backward()
        our_opt.step()
    np.testing.assert_allclose(ours.weight.detach().numpy(), m.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(our_opt.state_dict()["state"][0]["exp_avg_sq"].numpy(),
                               opt.state_dict()["state"][0]["exp_avg_sq"].numpy(), rtol=1e-5)


@pytest.mark.parametrize("zip_format", FORMATS)
def test_map_location_forms(tmp_path, zip_format):
    base = torch.arange(6.).reshape(2, 3)
    path = _saved(tmp_path, {"w": base, "v": base[1]}, zip_format)
    meta = dt.load(path, map_location="meta")
    assert meta["w"].device.type == "meta" and meta["v"].shape == (3,)
    assert meta["v"].storage_offset() == 3
    for ml in ("cpu", dt.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        back = dt.load(path, map_location=ml)
        _same(back["w"], base), _same(back["v"], base[1])
    seen = []

    def fn(storage, location):
        seen.append((type(storage).__name__, location, storage.nbytes()))
        return storage
    back = dt.load(path, map_location=fn)
    assert seen == [("UntypedStorage", "cpu", 24)]          # once per storage, as PyTorch
    _same(back["v"], base[1])
    assert dt.load(path, map_location=lambda s, loc: None)["w"].sum().item() == 15.0


def test_files_objects_and_bytes_and_hub_style_loading(tmp_path):
    m = torch.nn.Linear(2, 2)
    path = _saved(tmp_path, m.state_dict(), name="linear-abc123.pth")
    ours = nn.Linear(2, 2)
    ours.load_state_dict(dt.load(path, map_location="cpu", weights_only=True))
    with open(path, "rb") as fh:
        from_file = dt.load(fh)
    from_bytes = dt.load(io.BytesIO(path.read_bytes()))
    for sd in (from_file, from_bytes, ours.state_dict()):
        np.testing.assert_array_equal(sd["weight"].detach().numpy(), m.weight.detach().numpy())
    before = path.read_bytes()
    mm = dt.load(path, mmap=True)
    np.testing.assert_array_equal(mm["bias"].numpy(), m.bias.detach().numpy())
    mm["bias"][0] = 123.0                    # the tensors are copies: the file stays as it was
    assert path.read_bytes() == before and mm["bias"][0].item() == 123.0
    assert dt.load(path, weights_only=False)["weight"].shape == (2, 2)


def test_storage_saved_alone_and_big_endian_files(tmp_path):
    t = torch.arange(4, dtype=torch.int32)
    back = dt.load(_saved(tmp_path, t.untyped_storage(), name="s.pt"))
    assert back.nbytes() == 16
    # a big-endian file: PyTorch's own byteorder record and byte-swapped storages
    src = _saved(tmp_path, {"i": t, "c": torch.tensor([1 + 2j, -3j]), "h": t.half()}, name="le.pt")
    big = tmp_path / "be.pt"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as zout:
        sizes = {"0": 4, "1": 4, "2": 2}        # element (complex: component) size per key
        for info in zin.infolist():
            data = zin.read(info)
            leaf = info.filename.split("/")[-1]
            if info.filename.endswith("byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                n = sizes[leaf]
                data = np.frombuffer(data, np.uint8).reshape(-1, n)[:, ::-1].tobytes()
            zout.writestr(info.filename, data)
    theirs, ours = torch.load(big), dt.load(big)
    for k in theirs:
        _same(ours[k], theirs[k])


class _Shell:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.system, (f"touch {self.target}",))


class _Eval:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (eval, (f"open({str(self.target)!r}, 'w').close()",))


def _rewrite_pickle(path, edit):
    """Rewrite the zip checkpoint at path, its data.pkl replaced by edit(data.pkl)."""
    with zipfile.ZipFile(path) as z:
        records = {i.filename: z.read(i) for i in z.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in records.items():
            z.writestr(name, edit(data) if name.endswith("data.pkl") else data)


def _as_pytorch_zip(path, payload):
    """A torch.save zip of a real state dict, its data.pkl replaced by payload."""
    torch.save({"w": torch.ones(2)}, path)
    _rewrite_pickle(path, lambda _: payload if isinstance(payload, bytes)
                    else pickle.dumps(payload, protocol=2))


def _evil_file(path, evil, wrap):
    if wrap == "zip":
        _as_pytorch_zip(path, {"w": evil})
    elif wrap == "legacy":
        torch.save({"w": torch.ones(1)}, path, _use_new_zipfile_serialization=False)
        data = path.read_bytes()
        head = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2)
        info = pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2)
        assert data.startswith(head)
        path.write_bytes(head + info + pickle.dumps({"w": evil}, protocol=2)
                         + pickle.dumps([], protocol=2))          # no storage keys
    else:
        path.write_bytes(pickle.dumps({"w": evil}))


@pytest.mark.parametrize("payload,named", [(_Shell, "posix.system"), (_Eval, "eval")])
@pytest.mark.parametrize("wrap", ["zip", "legacy", "raw"])
def test_malicious_pickles_are_refused_without_running(tmp_path, payload, named, wrap):
    flag = tmp_path / "PWNED"
    path = tmp_path / "evil.pth"
    _evil_file(path, payload(flag), wrap)
    with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {named}\b"):
        dt.load(path)                       # weights_only=True, the default
    assert not flag.exists()
    # allowlisting cannot unblock os / posix / sys; eval would need the user's explicit say
    if named == "posix.system":
        with dt.serialization.safe_globals([os.system]):
            with pytest.raises(pickle.UnpicklingError, match="is blocked"):
                dt.load(path)
        assert not flag.exists()


@pytest.mark.parametrize("wrap", ["zip", "legacy"])
def test_weights_only_false_unpickles_everything_as_pytorch(tmp_path, wrap):
    """weights_only=False is PyTorch's full unpickling, for trusted files only: the
    payload's eval runs (it creates a file in tmp_path). A pickle outside PyTorch's
    formats stays refused (its header pickles are always read restricted)."""
    flag = tmp_path / "RAN"
    path = tmp_path / "trusted.pth"
    _evil_file(path, _Eval(flag), wrap)
    assert dt.load(path, weights_only=False)["w"] is None      # open(...).close() is None
    assert flag.exists()
    flag.unlink()
    _evil_file(path, _Eval(flag), "raw")
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL eval\b"):
        dt.load(path, weights_only=False)
    assert not flag.exists()


def test_forged_storages_and_geometry_are_refused(tmp_path):
    # a view reaching past its storage must not read outside it
    class _Rebuild:
        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2,
                    (torch.ones(2).storage(), 0, (100,), (1,), False, __import__("collections")
                     .OrderedDict()))
    path = tmp_path / "forged.pth"
    torch.save({"t": _Rebuild()}, path)
    with pytest.raises(RuntimeError, match="out of bounds"):
        dt.load(path)
    # a torch.save zip whose record is shorter than its storage
    good = _saved(tmp_path, {"w": torch.ones(4)}, name="g.pt")
    cut = tmp_path / "cut.pt"
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(cut, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info.filename, data[:4] if "/data/" in info.filename else data)
    with pytest.raises(RuntimeError, match="holds 4 bytes"):
        dt.load(cut)


def test_unsupported_pytorch_files_say_what_they_are(tmp_path):
    legacy = _saved(tmp_path, {"w": torch.ones(2)}, zip_format=False, name="old.pt")
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        dt.load(legacy, mmap=True)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        dt.load(legacy, pickle_module=pickle)
    scripted = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), scripted)
    with pytest.raises(RuntimeError, match="TorchScript"):
        dt.load(scripted)
    whole = _saved(tmp_path, torch.nn.Linear(2, 2), name="whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        dt.load(whole, weights_only=False)
    bad = tmp_path / "notpt.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("x/readme.txt", "hi")
    with pytest.raises(RuntimeError, match="not a torch.save checkpoint"):
        dt.load(bad)


@pytest.mark.parametrize("zip_format", FORMATS)
def test_allowlisted_globals_load_and_the_unsafe_ones_are_listed(tmp_path, zip_format):
    import argparse
    obj = {"args": argparse.Namespace(lr=0.1, name="run"), "w": torch.ones(2),
           "tags": {"a", "b"}, "z": 1 + 2j}
    path = _saved(tmp_path, obj, zip_format)
    assert dt.serialization.get_unsafe_globals_in_checkpoint(path) == ["argparse.Namespace"]
    if zip_format:                  # (PyTorch's lists zip checkpoints only)
        assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == ["argparse.Namespace"]
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace"):
        dt.load(path)
    with dt.serialization.safe_globals([argparse.Namespace]):
        back = dt.load(path)
        assert dt.serialization.get_unsafe_globals_in_checkpoint(path) == []
    assert back["args"] == obj["args"] and back["tags"] == {"a", "b"} and back["z"] == 1 + 2j
    with pytest.raises(pickle.UnpicklingError):          # the allowlist was only for the block
        dt.load(path)


def _tensor_then(ops):
    """A protocol-2 pickle rebuilding the file's float32 storage '0' as a tensor of 2
    elements, then running `ops` on it."""
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storage"
            b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x02tQK\x00K\x02"
            b"\x85K\x01\x85\x89}tR" + ops + b".")


@pytest.mark.parametrize("ops,message", [
    (b"K\x00K\x07s", "Can only SETITEM for dict"),          # tensor[0] = 7
    (b"K\x07a", "Can only append to list"),                 # tensor.append(7)
    (b"}b", "Can only build"),                             # BUILD: tensor.__dict__.update
    (b")R", "unrecognized function"),                      # REDUCE: call the tensor
    (b"0ctorch\nfloat32\n)R", "unrecognized function"),   # call a dtype object
])
def test_forged_opcodes_on_allowed_objects_are_refused(tmp_path, ops, message):
    path = tmp_path / "forged.pth"
    _as_pytorch_zip(path, _tensor_then(b""))
    assert dt.load(path).tolist() == [1.0, 1.0]             # the well-formed base loads
    _as_pytorch_zip(path, _tensor_then(ops))
    with pytest.raises(pickle.UnpicklingError, match=message):
        dt.load(path)


def test_meta_tensors_python_attributes_and_pickle_protocol_4(tmp_path):
    t = torch.arange(3.)
    t.tag = "kept"
    p = torch.nn.Parameter(torch.ones(2))
    p.note = 5
    obj = {"meta": torch.empty(3, 4, device="meta"), "t": t, "p": p}
    back = dt.load(_saved(tmp_path, obj))
    assert back["meta"].device.type == "meta" and back["meta"].shape == (3, 4)
    assert back["t"].tag == "kept" and back["t"].tolist() == [0.0, 1.0, 2.0]
    assert type(back["p"]) is nn.Parameter and back["p"].note == 5
    path = tmp_path / "p4.pt"            # protocol 4 (FRAME, STACK_GLOBAL, MEMOIZE)
    torch.save(obj, path, pickle_protocol=4)
    assert dt.load(path)["t"].tag == "kept"


def test_attributes_reaching_tensor_internals_are_refused(tmp_path):
    t = torch.ones(2)
    t._offset = 10 ** 9                  # would move the view outside its storage
    with pytest.raises(pickle.UnpicklingError, match="'_offset'"):
        dt.load(_saved(tmp_path, {"t": t}))


def test_cuda_storages_of_old_files_map_to_the_cpu(tmp_path):
    """Files of PyTorch < 1.12 name torch.cuda.FloatStorage for cuda tensors."""
    path = tmp_path / "gpu.pth"
    torch.save({"w": torch.arange(3.)}, path)
    _rewrite_pickle(path, lambda data: data.replace(
        b"ctorch\nFloatStorage\n", b"ctorch.cuda\nFloatStorage\n").replace(
        b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    assert torch.load(path, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0]
    for ml in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s):
        assert dt.load(path, map_location=ml)["w"].tolist() == [0.0, 1.0, 2.0]
    if not dt.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a cuda"):
            dt.load(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sparse_tensors_load_with_their_invariants_checked(tmp_path):
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    coo = torch.sparse_coo_tensor(i, torch.tensor([3., 4., 5.]), (2, 3))
    obj = {"coo": coo, "csr": coo.to_sparse_csr(), "coalesced": coo.coalesce()}
    back = dt.load(_saved(tmp_path, obj))
    for k, v in obj.items():
        np.testing.assert_array_equal(back[k].to_dense().numpy(), v.to_dense().numpy())
    assert back["coo"].is_sparse and back["coalesced"].is_coalesced()
    assert back["csr"].layout is dt.sparse_csr
    bad = torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.tensor([1., 2.]), (2,),
                                  check_invariants=False)
    path = _saved(tmp_path, {"bad": bad}, name="bad.pt")
    # (PyTorch checks only under check_sparse_tensor_invariants; here always)
    with pytest.raises(RuntimeError, match="index"):
        dt.load(path)
    with pytest.raises(RuntimeError, match="zip format only"):
        dt.load(_saved(tmp_path, obj, zip_format=False, name="old.pt"))
