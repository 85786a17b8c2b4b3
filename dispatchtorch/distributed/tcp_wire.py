"""TCPStore's wire format, our own (PyTorch's C++ TCPStore speaks another: the two cannot
talk to each other). A message is a list of byte strings, framed as a 4-byte big-endian
count, then each field as a 4-byte big-endian length and its bytes. Requests start with
the operation's name; replies with a status: OK, TIMEOUT (a wait ran out) or EMPTY (a
queue had nothing to pop). Only bytes travel: nothing is unpickled from the network."""
from __future__ import annotations

import struct

from .errors import DistNetworkError

OK, TIMEOUT, EMPTY = b"ok", b"timeout", b"empty"
_U32 = struct.Struct(">I")
_CLOSED = ("Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server "
           "shutdown or crash?")


def encode(fields):
    parts = [_U32.pack(len(fields))]
    for f in fields:
        parts += [_U32.pack(len(f)), f]
    return b"".join(parts)


def _exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise DistNetworkError(_CLOSED)
        buf += chunk
    return bytes(buf)


def receive(sock):
    """The next message on sock; DistNetworkError when the peer has closed it."""
    (count,) = _U32.unpack(_exact(sock, 4))
    fields = []
    for _ in range(count):
        (size,) = _U32.unpack(_exact(sock, 4))
        fields.append(_exact(sock, size))
    return fields


def ms(seconds):
    return str(int(seconds * 1000)).encode()
