"""PyTorch's CPU engine: mt19937 seeded as ATen seeds it, and its state bytes.

numpy's MT19937 bit generator runs the twister in C; we only seed it the way
`at::mt19937` does (Knuth's init_genrand on the low 32 bits, not numpy's
SeedSequence) so the raw 32-bit stream is PyTorch's. The state serialises to
PyTorch's 5056-byte `CPUGeneratorImplState`, so `get_rng_state()` bytes move
between dispatchtorch and PyTorch in both directions.
"""
from __future__ import annotations

import struct

import numpy as np

N = 624
DEFAULT_SEED = 67280421310721          # c10::detail::default_rng_seed_val
# THGeneratorState (seed, left, seeded, next, state[624] as u64, normal_x/y/rho,
# normal_is_valid) then next_float_normal_sample and its valid flag, C-aligned.
_LAYOUT = struct.Struct("<QiiQ624Q3di4xf?3x")
STATE_BYTES = _LAYOUT.size              # 5056, as torch.get_rng_state().numel()


def _init_genrand(seed):
    key = np.empty(N, dtype=np.uint32)
    s = seed & 0xFFFFFFFF
    key[0] = s
    for j in range(1, N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        key[j] = s
    return key


_U64_MAX = (1 << 64) - 1


def _next64_is_random64():
    """Whether numpy's full-range uint64 draws are ATen's random64() on this build (C
    leaves the order of the two next32() calls in its expression to the compiler)."""
    a, b = np.random.MT19937(5), np.random.MT19937(5)
    raw = a.random_raw(8)
    want = (raw[0::2] << np.uint64(32)) | raw[1::2]
    got = np.random.Generator(b).integers(0, _U64_MAX, 4, dtype=np.uint64, endpoint=True)
    return bool((got == want).all())


_NEXT64_IS_RANDOM64 = _next64_is_random64()


class MT19937:
    """The engine plus the Box-Muller caches ATen keeps next to it."""

    __slots__ = ("seed", "_bg", "_gen", "next_double_normal", "next_float_normal")

    def __init__(self, seed=DEFAULT_SEED):
        self._bg = np.random.MT19937()
        self._gen = np.random.Generator(self._bg)     # shares _bg's state
        self.reseed(seed)

    def reseed(self, seed):
        self.seed = seed
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": _init_genrand(seed), "pos": N}}
        self.next_double_normal = None
        self.next_float_normal = None

    def random(self, n):
        """n draws of generator->random(): 32-bit values as uint64."""
        return self._bg.random_raw(n)

    def random64(self, n):
        """n draws of generator->random64(): (first << 32) | second."""
        if _NEXT64_IS_RANDOM64:
            # numpy's next_uint64 for MT19937 is next32() << 32 | next32(): one C loop
            # instead of 2n raw draws, a strided shift and an or (half the time)
            return self._gen.integers(0, _U64_MAX, n, dtype=np.uint64, endpoint=True)
        raw = self._bg.random_raw(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    # -- PyTorch's state bytes ---------------------------------------------------------------

    def state_bytes(self):
        st = self._bg.state["state"]
        pos = int(st["pos"])
        left, nxt = (1, pos) if pos >= N else (N - pos + 1, pos)
        dn, fn = self.next_double_normal, self.next_float_normal
        return _LAYOUT.pack(self.seed, left, 1, nxt, *st["key"].astype(np.uint64).tolist(),
                            0.0, 0.0 if dn is None else dn, 0.0, dn is not None,
                            0.0 if fn is None else fn, fn is not None)

    def load_state_bytes(self, data):
        if len(data) != STATE_BYTES:
            raise RuntimeError(f"set_state: expected a state of {STATE_BYTES} bytes (a CPU "
                               f"generator's get_state()), got {len(data)}")
        fields = _LAYOUT.unpack(bytes(data))
        seed, left, _seeded, nxt = fields[:4]
        key = np.array(fields[4:4 + N], dtype=np.uint64).astype(np.uint32)
        _x, normal_y, _rho, y_valid, next_float, float_valid = fields[4 + N:]
        pos = N if left <= 1 else nxt
        self.seed = seed
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self.next_double_normal = normal_y if y_valid else None
        self.next_float_normal = next_float if float_valid else None
