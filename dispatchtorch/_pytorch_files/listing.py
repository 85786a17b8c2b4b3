"""get_unsafe_globals_in_checkpoint for PyTorch's files: the globals their pickle names
that the weights-only load would refuse, found by reading opcodes (nothing is built)."""
from __future__ import annotations

import io
import pickletools
import zipfile

from .. import _safe_globals
from . import allowlist, legacy_format


def _named(data):
    """The "module.name" of every GLOBAL / STACK_GLOBAL in one pickle."""
    out, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            out.append(".".join(allowlist.canonical(*arg.split(" ", 1))))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            out.append(".".join(allowlist.canonical(strings[-2], strings[-1])))
        elif isinstance(arg, str):
            strings.append(arg)
        if op.name == "STOP":
            break
    return out


def _main_pickle(data):
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            top = zf.namelist()[0].split("/", 1)[0]
            return zf.read(f"{top}/data.pkl")
    fh = io.BytesIO(data)
    if data.startswith(legacy_format.HEAD):
        for _ in range(3):                     # magic number, protocol version, system info
            pickletools.dis(fh, out=io.StringIO())
    return fh


def unsafe_globals(data):
    allowed = {**allowlist.allowed(), **_safe_globals.user_allowed()}
    seen = []
    for full in _named(_main_pickle(data)):
        module = full.rsplit(".", 1)[0]
        if (full not in allowed or module in allowlist.BLOCKED_MODULES) and full not in seen:
            seen.append(full)
    return seen
