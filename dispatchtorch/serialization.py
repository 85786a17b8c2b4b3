"""dispatchtorch.save / load.

`save` writes PyTorch's own checkpoint format (the zip archive of torch.save, or its
legacy stream), so real PyTorch's torch.load reads it (_pytorch_files/saving.py). `load`
reads those files with a restricted unpickler (_pytorch_files/), and dispatchtorch's
older code-free format: a safetensors file whose tensors are named t0, t1, ... and whose
Python structure (dicts, lists, tuples, numbers, strings, None, dtypes, devices) is JSON in
its metadata with a CRC32 per tensor; loading that parses JSON and raw bytes only, so it
cannot run code. `save_safetensors_checkpoint` still writes that format. See
docs/serialization.md."""
from __future__ import annotations

import json
import os
import pickle
import struct
import zlib

import numpy as np

from . import _dtype as D
from ._device import device as Device
from ._map_location import map_device
from ._tensor import Tensor

DEFAULT_PROTOCOL = 2          # torch.serialization.DEFAULT_PROTOCOL
FORMAT = "dispatchtorch.checkpoint"
VERSION = 1
_META_KEY = "dispatchtorch"

# safetensors dtype names
_ST_NAMES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
             "int64": "I64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
             "float64": "F64", "complex64": "C64", "uint16": "U16", "uint32": "U32",
             "uint64": "U64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
             "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ",
             "float8_e8m0fnu": "F8_E8M0"}
_FROM_ST = {v: k for k, v in _ST_NAMES.items()}


class CheckpointError(RuntimeError):
    """A file that is not a readable dispatchtorch checkpoint (truncated, corrupted,
    another format)."""


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError("dispatchtorch.save / load need the 'safetensors' package: "
                          "pip install safetensors (or dispatchtorch[serialization])") from None
    return safetensors


# -- save ---------------------------------------------------------------------------------------

def _encode(obj, arrays, path="obj", memo=None):
    """obj as JSON-ready data; tensors go into `arrays` and are referenced by name. A
    tensor met twice is stored once (memo: id -> its node), and loads as one tensor."""
    from .nn.parameter import Parameter
    if isinstance(obj, Tensor) and obj.layout is not Tensor.layout:      # sparse COO / CSR
        return _encode_sparse(obj, arrays, path, memo)
    if isinstance(obj, Tensor):
        if memo is not None and id(obj) in memo:
            return memo[id(obj)][0]
        name = f"t{len(arrays)}"
        # (_host, not numpy(): float8 has no numpy() in PyTorch; ascontiguousarray makes 0-d 1-d)
        host = np.asarray(obj.detach().cpu()._host(), order="C")
        # safetensors has C64 but no complex128: stored as float64 (..., 2) pairs
        arrays[name] = host if host.dtype != np.complex128 else host.reshape(-1).view(
            np.float64).reshape(host.shape + (2,))
        node = {"__tensor__": name, "dtype": obj.dtype.name, "shape": list(host.shape),
                "device": str(obj.device), "crc32": zlib.crc32(host.tobytes())}
        if obj.requires_grad:
            node["requires_grad"] = True
        if isinstance(obj, Parameter):
            node["parameter"] = True
        if memo is not None:
            memo[id(obj)] = (node, obj)      # obj kept alive, so that its id stays unique
        return node
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return {"__float__": repr(float(obj))}            # JSON has no inf / nan
    if isinstance(obj, D.dtype):
        return {"__dtype__": obj.name}
    if isinstance(obj, Device):
        return {"__device__": str(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                raise TypeError(f"save_safetensors_checkpoint: cannot save the dict key {k!r} of type "
                                f"{type(k).__name__} at {path} (keys must be str, int, float, bool "
                                f"or None)")
            items.append([_encode(k, arrays, path, memo),
                          _encode(v, arrays, f"{path}[{k!r}]", memo)])
        return {"__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{path}[{i}]", memo)
                              for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, arrays, f"{path}[{i}]", memo) for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        raise TypeError(f"save_safetensors_checkpoint: convert the numpy array at {path} to a tensor first "
                        f"(dispatchtorch.from_numpy)")
    raise TypeError(f"save_safetensors_checkpoint: cannot save an object of type {type(obj).__name__} at "
                    f"{path}; a checkpoint holds tensors, numbers, strings, None, dtypes, devices "
                    f"and dicts / lists / tuples of them (it is never pickled; dispatchtorch.save "
                    f"writes any picklable object)")


def _encode_sparse(obj, arrays, path, memo):
    """A sparse tensor as its dense parts (stored as any tensor) and its size: COO as
    {"__sparse_coo__": [indices, values, size, coalesced]}, CSR as {"__sparse_csr__":
    [crow_indices, col_indices, values, size]}."""
    if obj.is_sparse:
        parts = [obj._indices(), obj._values()]
        return {"__sparse_coo__": [_encode(p, arrays, path, memo) for p in parts]
                + [list(obj.shape), bool(obj.is_coalesced())]}
    parts = [obj.crow_indices(), obj.col_indices(), obj.values()]
    return {"__sparse_csr__": [_encode(p, arrays, path, memo) for p in parts] + [list(obj.shape)]}


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """torch.save: obj (anything picklable) in PyTorch's own zip format, which real
    PyTorch's torch.load reads (_use_new_zipfile_serialization=False: PyTorch's legacy
    format). f: a path (written atomically) or a binary file object."""
    from ._pytorch_files import saving, zip_writer
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None

    def write(out):
        if _use_new_zipfile_serialization:
            archive = zip_writer.archive_name(path) if path is not None else "archive"
            saving.save_zip(obj, out, archive, pickle_module, pickle_protocol,
                            _disable_byteorder_record)
        else:
            saving.save_legacy(obj, out, pickle_module, pickle_protocol)
    if path is None:
        write(f)
    else:
        _write_atomically(path, write)


def save_safetensors_checkpoint(obj, f):
    """dispatchtorch's own code-free format (a safetensors file with the structure as
    JSON; see docs/serialization.md): obj is a tensor, a state dict, an optimizer state, or
    nested dicts / lists / tuples of those and plain values. f: a path or a binary file."""
    st = _safetensors()
    arrays = {}
    structure = _encode(obj, arrays, memo={})
    meta = json.dumps({"format": FORMAT, "version": VERSION, "structure": structure},
                      separators=(",", ":"))
    data = st.numpy.save(arrays, metadata={_META_KEY: meta,
                                           _META_KEY + ".crc32": str(zlib.crc32(meta.encode()))})
    if isinstance(f, (str, os.PathLike)):
        _write_atomically(os.fspath(f), lambda out: out.write(data))
    else:
        f.write(data)


def _write_atomically(path, write):
    """write(file) to a temporary file beside path, then rename it over path: a save that
    dies half way leaves the old file whole (rename is atomic on POSIX and Windows)."""
    import tempfile
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# -- load ---------------------------------------------------------------------------------------

def _read(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read(), str(f)
    if isinstance(f, (bytes, bytearray)):
        return bytes(f), "<bytes>"
    return f.read(), getattr(f, "name", "<file object>")


def _header(data, name):
    """The safetensors header of data, or a CheckpointError saying what data is."""
    n = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else None
    if n is None or n + 8 > len(data) or data[8:9] != b"{":
        if n is None:
            raise CheckpointError(f"dispatchtorch.load: {name} is truncated or not a checkpoint "
                                  f"({len(data)} bytes)")
        if n + 8 > len(data):
            raise CheckpointError(f"dispatchtorch.load: {name} is truncated: its header claims "
                                  f"{n} bytes but the file has {len(data) - 8} after the length")
        raise CheckpointError(f"dispatchtorch.load: {name} is not a safetensors checkpoint "
                              f"(corrupted, or another format)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"dispatchtorch.load: {name} has a corrupted header ({exc})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"dispatchtorch.load: {name} has a corrupted header")
    return header


class _UserError(Exception):
    """An exception raised by the caller's map_location: passed through, not a
    CheckpointError."""


class _Decoder:
    def __init__(self, tensors, map_location, name):
        self.tensors, self.map_location, self.name = tensors, map_location, name
        # each stored tensor is read once: the same stored tensor referenced twice is one
        # tensor (as PyTorch keeps shared storage), so memory stays proportional to the file
        self.loaded = {}

    def fail(self, what):
        raise CheckpointError(f"dispatchtorch.load: {self.name} is corrupted: {what}")

    def tensor(self, node):
        from . import ops
        from .nn.parameter import Parameter
        key = node.get("__tensor__")
        if not isinstance(key, str):
            self.fail(f"a tensor node names {key!r}, not a stored tensor's name")
        memo = (key, bool(node.get("parameter")), bool(node.get("requires_grad")))
        done = self.loaded.get(memo)
        if done is not None:
            return done
        info = self.tensors.get(key)
        if info is None:
            self.fail(f"the structure names a tensor {key!r} that the file does not hold")
        dtype = _FROM_ST.get(info["dtype"])
        pairs = dtype == "float64" and node.get("dtype") == "complex128"     # see _encode
        if pairs:
            dtype, info = "complex128", {**info, "shape": list(info["shape"])[:-1]}
        if dtype is None or dtype != node.get("dtype"):
            self.fail(f"tensor {key!r} has dtype {info['dtype']}, expected {node.get('dtype')}")
        if list(info["shape"]) != node.get("shape"):
            self.fail(f"tensor {key!r} has shape {info['shape']}, expected {node.get('shape')}")
        raw = info["data"]
        if zlib.crc32(raw) != node.get("crc32"):
            self.fail(f"the bytes of tensor {key!r} do not match their checksum")
        dt = D.BY_NAME[dtype]
        shape = tuple(info["shape"])
        host = np.frombuffer(raw, dtype=dt.np).reshape(shape).copy()
        saved_device = node.get("device", "cpu")
        target = map_device(saved_device, self.map_location)
        t = ops.tensor(host, dtype=dt, device="cpu")
        if target is not None and str(target) != "cpu":
            t = t.to(target)
        elif target is None:
            try:
                r = self.map_location(t, saved_device)
            except Exception as exc:
                raise _UserError(exc) from exc
            t = r if isinstance(r, Tensor) else t
        if node.get("parameter"):
            t = Parameter(t, requires_grad=bool(node.get("requires_grad", True)))
        elif node.get("requires_grad"):
            t.requires_grad_(True)
        self.loaded[memo] = t
        return t

    def sparse(self, node):
        """A sparse COO / CSR tensor from its stored parts (see _encode_sparse)."""
        from .sparse import _build, _csr
        coo = "__sparse_coo__" in node
        items = node["__sparse_coo__" if coo else "__sparse_csr__"]
        n = 2 if coo else 3
        if not isinstance(items, list) or len(items) != n + (2 if coo else 1) \
                or not all(isinstance(i, dict) and "__tensor__" in i for i in items[:n]) \
                or not isinstance(items[n], list) \
                or not all(isinstance(k, int) and k >= 0 for k in items[n]):
            self.fail("a sparse tensor node is malformed")
        parts = [self.tensor(i) for i in items[:n]]
        if coo:
            if parts[0].dim() != 2 or parts[0].dtype.name != "int64" \
                    or parts[1].dim() < 1 or parts[0].shape[1] != parts[1].shape[0]:
                self.fail("a sparse COO tensor's indices and values do not match")
            # the invariants (index ranges, sizes) checked as sparse_coo_tensor checks them
            t = _build.sparse_coo_tensor(parts[0], parts[1], items[n])
            return _build.rebuild_coo(t._indices(), parts[1], items[n], bool(items[n + 1]))
        return _csr.sparse_csr_tensor(parts[0], parts[1], parts[2].detach(), items[n],
                                      requires_grad=parts[2].requires_grad)

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            self.fail(f"unexpected structure node {node!r}")
        if "__tensor__" in node:
            return self.tensor(node)
        if "__dict__" in node:
            items = node["__dict__"]
            if not isinstance(items, list) or any(not isinstance(i, list) or len(i) != 2
                                                   for i in items):
                self.fail("a dict node is malformed")
            return {self.decode(k): self.decode(v) for k, v in items}
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__sparse_coo__" in node or "__sparse_csr__" in node:
            return self.sparse(node)
        if "__float__" in node:
            try:
                return float(node["__float__"])
            except (TypeError, ValueError):
                self.fail(f"bad float {node['__float__']!r}")
        if "__dtype__" in node:
            if node["__dtype__"] not in D.BY_NAME:
                self.fail(f"unknown dtype {node['__dtype__']!r}")
            return D.BY_NAME[node["__dtype__"]]
        if "__device__" in node:
            try:
                return Device(str(node["__device__"]))
            except RuntimeError as exc:          # torch.device's refusal, as PyTorch's
                self.fail(f"bad device {node['__device__']!r} ({exc})")
        self.fail(f"unknown structure node with keys {sorted(node)}")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read what `save` wrote, or a file of PyTorch's torch.save. map_location: None (each
    tensor's saved device), a device, a {saved: target} dict of device strings, or
    fn(tensor_on_cpu, saved_device_str) (PyTorch's files: fn(storage, location))."""
    from . import _pickle_checkpoint, _pytorch_files
    if weights_only is None:
        weights_only = True
    pt = dict(map_location=map_location, pickle_module=pickle_module, weights_only=weights_only,
              mmap=mmap, encoding=kwargs.get("encoding", "utf-8"))
    if isinstance(f, (str, os.PathLike)):        # a PyTorch file is read record by record
        with open(f, "rb") as fh:
            what = _pytorch_files.kind(fh.read(_pytorch_files.HEAD_BYTES))
        if what is not None:
            return _pytorch_files.load(f, str(f), what, **pt)
    data, name = _read(f)
    what = _pytorch_files.kind(data[:_pytorch_files.HEAD_BYTES])
    if what is not None:                         # written by PyTorch's torch.save
        return _pytorch_files.load_bytes(data, name, what, **pt)
    st = _safetensors()
    if _pickle_checkpoint.is_pickle_checkpoint(data):      # torch.save of a whole object
        return _pickle_checkpoint.load(data, name, map_location, weights_only, pickle_module)
    header = _header(data, name)
    metadata = header.get("__metadata__")
    meta = metadata.get(_META_KEY) if isinstance(metadata, dict) else None
    if not isinstance(meta, str):
        raise CheckpointError(f"dispatchtorch.load: {name} is a safetensors file without "
                              f"dispatchtorch's structure (written by another program, or its "
                              f"header is corrupted); read plain safetensors files with "
                              f"dispatchtorch.serialization.load_safetensors")
    if metadata.get(_META_KEY + ".crc32") != str(zlib.crc32(meta.encode())):
        raise CheckpointError(f"dispatchtorch.load: {name} is corrupted: its structure does not "
                              f"match its checksum")
    try:
        info = json.loads(meta)
        structure = info["structure"]
    except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as exc:
        raise CheckpointError(f"dispatchtorch.load: {name} has corrupted metadata ({exc})") from None
    if info.get("format") != FORMAT or info.get("version", 0) > VERSION:
        raise CheckpointError(f"dispatchtorch.load: {name} has format {info.get('format')!r} "
                              f"version {info.get('version')!r}; this dispatchtorch reads "
                              f"{FORMAT!r} up to version {VERSION}")
    try:
        tensors = dict(st.deserialize(data))
    except Exception as exc:        # safetensors raises its own error type
        raise CheckpointError(f"dispatchtorch.load: {name} is truncated or corrupted "
                              f"({exc})") from None
    try:
        return _Decoder(tensors, map_location, name).decode(structure)
    except _UserError as exc:
        raise exc.args[0] from None
    except CheckpointError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        # forged structure (a node of the wrong type, a list as a dict key, nesting past
        # the recursion limit): the checkpoint's error, never Python's
        raise CheckpointError(f"dispatchtorch.load: {name} has a malformed structure "
                              f"({type(exc).__name__}: {exc})") from None


def load_safetensors(f, device="cpu"):
    """A plain safetensors file (e.g. written by safetensors.torch) as {name: tensor}."""
    from . import ops
    st = _safetensors()
    data, name = _read(f)
    _header(data, name)
    try:
        entries = st.deserialize(data)
    except Exception as exc:
        raise CheckpointError(f"load_safetensors: {name} is truncated or corrupted ({exc})") from None
    out = {}
    for key, info in entries:
        dtype = _FROM_ST.get(info["dtype"])
        if dtype is None:
            raise CheckpointError(f"load_safetensors: tensor {key!r} has unsupported dtype "
                                  f"{info['dtype']}")
        dt = D.BY_NAME[dtype]
        host = np.frombuffer(info["data"], dtype=dt.np).reshape(tuple(info["shape"])).copy()
        out[key] = ops.tensor(host, dtype=dt, device=device)
    return out


# -- pickle support (copy / multiprocessing), used by Tensor.__reduce_ex__ ----------------------

def _rebuild_tensor(array, device, requires_grad):
    from . import ops
    t = ops.tensor(array, device=device)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_shared(fd, storage_shape, dtype, shape, stride, offset, rebuilder, requires_grad):
    """A shared cpu tensor sent from another process (see _shared_storage._reduce_for_child): a
    view of the storage on the memory of `fd` (an fd this process received)."""
    from . import _dtype as D
    from ._run import make_view, wrap
    from ._place import place_of
    from ._shared_storage import adopt_shared, register_reducer
    place = place_of("cpu")
    storage = adopt_shared(place.bk, fd, tuple(storage_shape), dtype)
    root = wrap(storage, tuple(storage_shape), D.to_dtype(dtype), place)
    t = root if (tuple(shape), tuple(stride), offset) == (root.shape, root.stride(), 0) \
        else make_view(root, tuple(shape), tuple(stride), offset)
    if rebuilder == "_rebuild_parameter":
        from .nn.parameter import Parameter
        t = Parameter(t, requires_grad)
        register_reducer(Parameter)
        return t
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_parameter(array, device, requires_grad):
    from .nn.parameter import Parameter
    return Parameter(_rebuild_tensor(array, device, False), requires_grad)


from ._safe_globals import (add_safe_globals, clear_safe_globals, get_safe_globals,  # noqa: E402
                            safe_globals)


def get_unsafe_globals_in_checkpoint(f):
    """The globals a pickled checkpoint names that a weights-only load would refuse."""
    from . import _pickle_checkpoint, _pytorch_files
    data, _ = _read(f)
    if _pytorch_files.kind(data[:_pytorch_files.HEAD_BYTES]) in ("zip", "legacy"):
        from ._pytorch_files import listing
        return listing.unsafe_globals(data)
    return _pickle_checkpoint.unsafe_globals(data) if _pickle_checkpoint.is_pickle_checkpoint(data) \
        else []


__all__ = ["save", "load", "load_safetensors", "save_safetensors_checkpoint", "DEFAULT_PROTOCOL", "CheckpointError", "add_safe_globals",
           "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]
