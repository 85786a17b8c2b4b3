"""The zip archive torch.save writes (PyTorch's PyTorchStreamWriter over miniz), byte for
byte where we can: records stored uncompressed under `<archive>/`, each record's data
aligned to 64 bytes by an "FB" extra field of 'Z's, a data descriptor after every non-empty
record, and the zip64 end-of-central-directory records miniz always writes with
MZ_ZIP_FLAG_WRITE_ZIP64. Python's zipfile cannot place the padding, so the bytes are
written here."""
from __future__ import annotations

import struct
import zlib

ALIGNMENT = 64
ZIP32_LIMIT = 0xFFFFFFFF          # sizes / offsets at or past it need zip64 fields
_SENTINEL = 0xFFFFFFFF            # a 32-bit field whose value is in the zip64 field


def _small(value):
    return value if value < ZIP32_LIMIT else _SENTINEL
_U64 = 0xFFFFFFFFFFFFFFFF


def archive_name(path):
    """The archive folder PyTorch names after a path: its base name, last suffix cut
    (caffe2/serialize/inline_container.cc basename); a file object's is "archive"."""
    if path is None:
        return "archive"
    start = max(path.rfind("/"), path.rfind("\\")) + 1
    base = path[start:]
    dot = base.rfind(".")
    name = base[:dot] if dot >= 0 else base
    if not name:
        raise RuntimeError(f"PytorchStreamWriter failed: invalid file name: {path}")
    return name


def _hash_bytes(data, seed=0xc70f6907):
    """libstdc++'s std::hash<std::string> (64-bit _Hash_bytes), for the serialization id."""
    mul = (0xc6a4a793 << 32) + 0x5bd1e995
    n = len(data)
    h = (seed ^ (n * mul)) & _U64
    whole = n & ~7
    for i in range(0, whole, 8):
        v = (int.from_bytes(data[i:i + 8], "little") * mul) & _U64
        h = ((h ^ ((v ^ (v >> 47)) * mul & _U64)) * mul) & _U64
    if n & 7:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * mul) & _U64
    h = ((h ^ (h >> 47)) * mul) & _U64
    return h ^ (h >> 47)


def _combine(seed, value):
    """c10::hash_combine."""
    return (seed ^ ((value + 0x9e3779b9 + (seed << 6) + (seed >> 2)) & _U64)) & _U64


# libstdc++'s bucket counts (hashtable-aux.cc __prime_list, from 17 on; 2..13 come from
# its small table), enough for any checkpoint's record count
_PRIMES = (17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103,
           109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293,
           313, 337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953,
           1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753,
           2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953, 6427, 6949, 7517, 8123,
           8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749, 19183, 20753,
           22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481, 49201, 53201,
           57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731, 126271,
           136607, 147793, 159871, 172933, 187091, 202409, 218971, 236897, 256279, 277261,
           299951, 324503, 351061, 379787, 410857, 444487, 480881, 520241, 562841, 608903,
           658753, 712697, 771049, 834181, 902483, 976369)
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)


def _next_buckets(n):
    """_Prime_rehash_policy::_M_next_bkt: (bucket count, next resize) for n."""
    if n < len(_FAST_BUCKETS):
        return _FAST_BUCKETS[n], _FAST_BUCKETS[n]
    for p in _PRIMES:
        if p >= n:
            return p, p
    raise OverflowError("more zip records than the serialization id's model covers")


def _unordered_set_order(names, codes):
    """The iteration order of a libstdc++ std::unordered_set<std::string> after inserting
    names (hashes: codes) in order: one singly linked list, a node inserted at the head of
    its bucket's run (or of the list when its bucket is empty), rehashed by re-inserting
    the list in order into the next bucket count of the prime policy (load factor 1)."""
    nxt, code = {None: None}, dict(zip(names, codes))    # None: the before-begin node
    buckets, n_bkt, next_resize = {}, 1, 0
    for count, node in enumerate(names):
        if count + 1 > next_resize:
            least = max(count + 1, 0 if next_resize else 11)
            if least >= n_bkt:
                n_bkt, next_resize = _next_buckets(max(least + 1, n_bkt * 2))
                p, nxt[None], buckets, begin_bkt = nxt[None], None, {}, 0
                while p is not None:
                    after, b = nxt[p], code[p] % n_bkt
                    if b not in buckets:
                        nxt[p], nxt[None], buckets[b] = nxt[None], p, None
                        if nxt[p] is not None:
                            buckets[begin_bkt] = p
                        begin_bkt = b
                    else:
                        nxt[p], nxt[buckets[b]] = nxt[buckets[b]], p
                    p = after
            else:
                next_resize = n_bkt
        b = code[node] % n_bkt
        if b in buckets:
            nxt[node], nxt[buckets[b]] = nxt[buckets[b]], node
        else:
            nxt[node], nxt[None] = nxt[None], node
            if nxt[node] is not None:
                buckets[code[nxt[node]] % n_bkt] = node
            buckets[b] = None
    out, p = [], nxt[None]
    while p is not None:
        out.append(p)
        p = nxt[p]
    return out


class ZipWriter:
    """Writes records to a binary stream `out` (only .write is used) as PyTorch's writer."""

    def __init__(self, out, name):
        self.out, self.prefix = out, name + "/"
        self.pos, self.entries, self.crc_combined = 0, [], 0

    def _put(self, data):
        self.out.write(data)
        self.pos += len(data)

    def write_record(self, name, data):
        """data: bytes-like (a memoryview of a tensor's bytes is written without a copy)."""
        full = (self.prefix + name).encode("utf-8")
        data = memoryview(data).cast("B")
        size, offset = data.nbytes, self.pos
        big_size, big_offset = size >= ZIP32_LIMIT, offset >= ZIP32_LIMIT
        zip64 = b""
        if big_size or big_offset:          # miniz's local zip64 field: sizes, then offset
            fields = (struct.pack("<QQ", size, size) if big_size else b"") + \
                (struct.pack("<Q", offset) if big_offset else b"")
            zip64 = struct.pack("<HH", 1, len(fields)) + fields
        start = offset + 30 + len(full) + 4 + len(zip64)
        pad = (-start) % ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800     # utf-8 names; a data descriptor follows data
        crc = zlib.crc32(data) if size else 0
        # sizes and CRC are 0 in the local header: they follow the data (a descriptor)
        self._put(b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", 0, flags, 0, 0, 0, 0, 0, 0,
                                              len(full), len(extra)) + full + extra)
        self._put(data)
        if size:
            self.crc_combined = _combine(self.crc_combined, crc)
            if zip64:                           # miniz: 64-bit sizes once zip64 info exists
                self._put(b"PK\x07\x08" + struct.pack("<IQQ", crc, size, size))
            else:
                self._put(b"PK\x07\x08" + struct.pack("<III", crc, size, size))
        self.entries.append((full, flags, crc, size, offset))

    def serialization_id(self):
        """PyTorch's `.data/serialization_id`: a hash combining the record names' hashes
        in the order PyTorch's std::unordered_set holds them, then one combining the
        records' CRC32s, 20 digits each."""
        names = [e[0].decode("utf-8")[len(self.prefix):] for e in self.entries]
        h = 0
        for n in _unordered_set_order(names, [_hash_bytes(n.encode("utf-8")) for n in names]):
            h = _combine(h, _hash_bytes(n.encode("utf-8")))
        return f"{h:020d}{self.crc_combined:020d}"

    def finish(self):
        """The central directory and the end records (zip64 ones always, as miniz)."""
        cd_offset = self.pos
        for full, flags, crc, size, offset in self.entries:
            fields = (struct.pack("<QQ", size, size) if size >= ZIP32_LIMIT else b"") + \
                (struct.pack("<Q", offset) if offset >= ZIP32_LIMIT else b"")
            extra = struct.pack("<HH", 1, len(fields)) + fields if fields else b""
            self._put(b"PK\x01\x02" + struct.pack(
                "<HHHHHHIIIHHHHHII", 0, 0, flags, 0, 0, 0, crc, _small(size), _small(size),
                len(full), len(extra), 0, 0, 0, 0, _small(offset)) + full + extra)
        cd_size, n = self.pos - cd_offset, len(self.entries)
        eocd64 = self.pos
        self._put(b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 0x031e, 0x002d, 0, 0, n, n,
                                              cd_size, cd_offset))
        self._put(b"PK\x06\x07" + struct.pack("<IQI", 0, eocd64, 1))
        self._put(b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                              _small(cd_size), _small(cd_offset), 0))
