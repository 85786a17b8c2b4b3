"""torch.save in PyTorch's own formats, so that real PyTorch's torch.load reads what
dispatchtorch saves: the zip archive (PyTorch's default, torch/serialization.py `_save`)
and the legacy stream (`_legacy_save`, _use_new_zipfile_serialization=False)."""
from __future__ import annotations

import pickle
import struct
import sys

import numpy as np

from . import legacy_format, pickler, zip_writer


def _host_bytes(flat):
    """A flat tensor's bytes on the host, as a read-only buffer (no copy on the cpu)."""
    host = np.ascontiguousarray(flat.detach().cpu()._host())
    return memoryview(host.reshape(-1).view(np.uint8))


def save_zip(obj, out, archive, pickle_module=None, protocol=2, disable_byteorder=False):
    """Write obj to the binary stream `out` as torch.save's zip archive named `archive`."""
    storages = pickler.StorageTable()
    data = pickler.dumps(obj, storages, pickle_module, protocol)
    z = zip_writer.ZipWriter(out, archive)
    z.write_record("data.pkl", data)
    z.write_record(".format_version", b"1")
    z.write_record(".storage_alignment", str(zip_writer.ALIGNMENT).encode())
    if not disable_byteorder:
        z.write_record("byteorder", sys.byteorder.encode())
    for key, flat in storages.records.items():
        z.write_record(f"data/{key}", _host_bytes(flat))
    z.write_record("version", b"3\n")
    if disable_byteorder:                   # PyTorch's writer adds it at the end anyway
        z.write_record("byteorder", sys.byteorder.encode())
    z.write_record(".data/serialization_id", z.serialization_id().encode())
    z.finish()


def save_legacy(obj, out, pickle_module=None, protocol=2):
    """Write obj as PyTorch's legacy stream: the magic number, protocol version and system
    information pickles, the object, its sorted storage keys, then each storage as its
    int64 element count and bytes."""
    module = pickle_module or pickle
    for head in (legacy_format.MAGIC_NUMBER, legacy_format.PROTOCOL_VERSION,
                 {"protocol_version": legacy_format.PROTOCOL_VERSION,
                  "little_endian": sys.byteorder == "little",
                  "type_sizes": {"short": struct.calcsize("=h"), "int": struct.calcsize("=i"),
                                 "long": struct.calcsize("=l")}}):
        module.dump(head, out, protocol=protocol)
    storages = pickler.StorageTable(legacy=True)
    out.write(pickler.dumps(obj, storages, pickle_module, protocol))
    keys = sorted(storages.records)
    module.dump(keys, out, protocol=protocol)
    for key in keys:
        flat = storages.records[key]
        out.write(storages.numels[key].to_bytes(8, "little", signed=True))
        out.write(_host_bytes(flat))
