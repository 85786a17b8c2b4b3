"""dispatchtorch.load of files in PyTorch's torch.save formats (written by PyTorch or by
dispatchtorch.save): the zip format (the default since PyTorch 1.6) and the legacy one,
read into dispatchtorch tensors with a restricted unpickler (torch.load's
weights_only=True, the default: a file cannot run code) or, with weights_only=False, a
full one (trusted files only). See docs/serialization.md."""
from __future__ import annotations

import io
import os

from . import legacy_format, zip_format
from .rebuild import StorageRef


def kind(head):
    """"zip", "legacy" or "tar" for the first bytes of a PyTorch checkpoint, else None."""
    if head[8:9] == b"{":             # a safetensors header (dispatchtorch's own format)
        return None
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[:len(legacy_format.HEAD)] == legacy_format.HEAD:
        return "legacy"
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "legacy"               # another pickle: read as PyTorch would (and refused)
    if legacy_format.is_tar(head):
        return "tar"
    return None


HEAD_BYTES = 263


def load(f, name, what, map_location=None, pickle_module=None, weights_only=True, mmap=None,
         encoding="utf-8"):
    """f: a path or a seekable binary file; what: kind() of its first bytes."""
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if what == "tar":
        raise RuntimeError(f"torch.load: {name} is in PyTorch's oldest (tar) format, which "
                           f"cannot be loaded with weights_only=True and which dispatchtorch "
                           f"does not read; save it again with a current PyTorch")
    if mmap and what != "zip":
        raise RuntimeError(f"mmap can only be used with files saved with `torch.save({name}, "
                           f"_use_new_zipfile_serialization=True), please torch.save your "
                           f"checkpoint with this option in order to use mmap.")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, name, what, map_location, encoding, bool(mmap), not weights_only)
    return _load(f, name, what, map_location, encoding, False, not weights_only)


def _load(fh, name, what, map_location, encoding, mmap, full):
    if what == "zip":
        return _storages_out(zip_format.load(fh, name, map_location, encoding, mmap, full))
    return _storages_out(legacy_format.load(fh, name, map_location, encoding, full))


def _storages_out(obj):
    """A storage saved on its own (torch.save(t.untyped_storage())) comes back as a
    TypedStorage, as from PyTorch's loader."""
    from .._storage import _typed
    if isinstance(obj, StorageRef):
        return _typed(obj.flat(obj.dtype))
    if type(obj) is dict:
        out = {k: _storages_out(v) for k, v in obj.items()}
        return out if any(out[k] is not v for k, v in obj.items()) else obj
    if type(obj) in (list, tuple):
        out = [_storages_out(v) for v in obj]
        return type(obj)(out) if any(a is not b for a, b in zip(out, obj)) else obj
    return obj


def load_bytes(data, name, what, **kw):
    return load(io.BytesIO(data), name, what, **kw)
