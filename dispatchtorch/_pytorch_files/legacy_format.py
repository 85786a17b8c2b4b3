"""PyTorch's legacy checkpoint (torch.save before 1.6, or _use_new_zipfile_serialization=
False): pickles one after another (magic number, protocol version, system info, the
object, the storage keys), then each storage as an int64 element count and its bytes."""
from __future__ import annotations

import struct

from . import placing, unpickler
from .rebuild import StorageRef

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
# the first pickle's bytes: protocol 2, then MAGIC_NUMBER as LONG1
HEAD = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19."


def is_tar(data):
    return len(data) > 262 and data[257:262] == b"ustar"


def load(fh, name, map_location, encoding="utf-8", full=False):
    if unpickler.load(fh, None, encoding) != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = unpickler.load(fh, None, encoding)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    info = unpickler.load(fh, None, encoding)
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise RuntimeError(f"torch.load: {name} was saved on a big-endian machine in the legacy "
                           f"format, which dispatchtorch does not read; save it again with "
                           f"torch.save's default (zip) format")
    # the storages' bytes follow the object: a first pass (on the meta device, reading no
    # data) finds them, the second rebuilds the tensors over them
    at = fh.tell()
    refs = {}
    _objects(fh, name, refs, lambda ref, dt: placing.meta_flat(ref, dt), encoding, full)
    keys = unpickler.load(fh, None, encoding)
    if not isinstance(keys, list) or set(keys) != set(refs):
        raise RuntimeError(f"torch.load: {name} is corrupted (its storage list does not match)")
    raw = {}
    for key in keys:
        ref = refs[key]
        head = fh.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] != ref.numel:
            raise RuntimeError(f"torch.load: {name} is truncated or corrupted at storage {key}")
        raw[key] = fh.read(ref.nbytes)
        if len(raw[key]) != ref.nbytes:
            raise RuntimeError(f"torch.load: {name} is truncated at storage {key}")
    if placing.is_meta(map_location):
        fh.seek(at)
        return _objects(fh, name, {}, lambda ref, dt: placing.meta_flat(ref, dt), encoding, full)
    fh.seek(at)
    return _objects(fh, name, {}, lambda ref, dt: placing.flat(ref, dt, raw[ref.key],
                                                               map_location), encoding, full)


def _objects(fh, name, refs, make, encoding, full=False):
    """Unpickle the object, its storages made by make(ref, dtype) (refs: key -> ref)."""
    def storage(stype, key, location, numel, rest):
        if rest and rest[0] is not None:
            raise RuntimeError(f"torch.load: {name} has storage views (a pre-1.0 legacy file), "
                               f"which dispatchtorch does not read")
        ref = refs.get(key)
        if ref is None:
            ref = refs[key] = StorageRef(key, stype.dtype, numel, location, make)
        return ref
    return unpickler.load(fh, storage, encoding, full)
