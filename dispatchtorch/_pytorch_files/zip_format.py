"""PyTorch's zip checkpoint (torch.save since 1.6): `<name>/data.pkl`, the pickle whose
persistent ids ('storage', type, key, location, numel) name the records
`<name>/data/<key>` (raw bytes, in the order `<name>/byteorder` says), plus `version`."""
from __future__ import annotations

import io
import mmap as _mmap
import struct
import sys
import zipfile

from . import placing, unpickler
from .rebuild import StorageRef


def _prefix(zf, name):
    """The archive's folder (the first record's), checked to be a torch.save checkpoint."""
    names = zf.namelist()
    top = names[0].split("/", 1)[0] if names else ""
    if f"{top}/constants.pkl" in names:
        raise RuntimeError(f"torch.load: {name} is a TorchScript archive (torch.jit.save); "
                           f"dispatchtorch.load reads torch.save checkpoints only (TorchScript "
                           f"is not supported: export the model's state_dict instead)")
    if f"{top}/data.pkl" not in names:
        raise RuntimeError(f"torch.load: {name} is a zip archive but not a torch.save checkpoint "
                           f"(it has no {top}/data.pkl)")
    return top


def _data_offset(fh, info):
    """Where a stored (uncompressed) record's bytes start in the file."""
    fh.seek(info.header_offset)
    head = fh.read(30)
    if head[:4] != b"PK\x03\x04":
        raise RuntimeError(f"torch.load: corrupted zip record {info.filename}")
    n, m = struct.unpack("<HH", head[26:30])
    return info.header_offset + 30 + n + m


def load(fh, name, map_location, encoding="utf-8", mmap=False, full=False):
    """The object in the zip checkpoint open as fh (binary, seekable); full: weights_only=False."""
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as exc:
        raise RuntimeError(f"torch.load: {name} is a corrupted zip checkpoint ({exc})") from None
    top = _prefix(zf, name)
    order = zf.read(f"{top}/byteorder") if f"{top}/byteorder" in zf.namelist() else b"little"
    if order not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + order.decode(errors="replace"))
    swap = order.decode() != sys.byteorder
    mapped = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ) if mmap else None
    meta = placing.is_meta(map_location)
    refs = {}

    def read(ref):
        record = f"{top}/data/{ref.key}"
        try:
            info = zf.getinfo(record)
        except KeyError:
            raise RuntimeError(f"torch.load: {name} has no record {record} (truncated or "
                               f"corrupted)") from None
        if info.file_size != ref.nbytes:
            raise RuntimeError(f"torch.load: {name}: record {record} holds {info.file_size} bytes, "
                               f"its storage needs {ref.nbytes}")
        if mapped is not None and info.compress_type == zipfile.ZIP_STORED:
            start = _data_offset(fh, info)
            return memoryview(mapped)[start:start + info.file_size]
        return zf.read(info)

    def make(ref, dtype):
        if meta:
            return placing.meta_flat(ref, dtype)
        return placing.flat(ref, dtype, read(ref), map_location, swap)

    def storage(stype, key, location, numel, _rest):
        ref = refs.get(key)
        if ref is None:
            ref = refs[key] = StorageRef(key, stype.dtype, numel, location, make)
        return ref

    data = io.BytesIO(zf.read(f"{top}/data.pkl"))
    return unpickler.load(data, storage, encoding, full)
