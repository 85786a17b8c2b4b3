"""Random numbers: PyTorch's CPU generator, stream for stream.

Values are drawn on the host by mt19937 with ATen's transforms (`_random_streams`)
and transferred, so `manual_seed(s)` gives PyTorch's CPU numbers on every backend
(and conformance inputs are reproducible). A CUDA/OpenCL tensor therefore gets
PyTorch's *CPU* stream, not its Philox GPU stream.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from .._device import device as Device
from . import creation
from ._mt19937 import DEFAULT_SEED, MT19937


class Generator:
    """torch.Generator: an independent stream; draws hold its lock, as ATen's mutex."""

    def __init__(self, device="cpu"):
        self.device = Device(device)
        self._engine = MT19937(DEFAULT_SEED)
        self.lock = threading.Lock()

    def manual_seed(self, seed):
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise RuntimeError(f"manual_seed: seed must be within [-0x8000_0000_0000_0000, "
                               f"0xffff_ffff_ffff_ffff], got {seed}")
        with self.lock:
            self._engine.reseed(seed % 2 ** 64)
        return self

    def seed(self):
        """A non-deterministic seed, as torch.Generator.seed()."""
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._engine.seed

    def get_state(self):
        with self.lock:
            data = self._engine.state_bytes()
        return creation.tensor(np.frombuffer(data, dtype=np.uint8).copy(), dtype="uint8")

    def set_state(self, new_state):
        from .._dtype import uint8
        if getattr(new_state, "dtype", None) is not uint8:
            raise TypeError(f"set_state: expected a torch.ByteTensor, got "
                            f"{getattr(new_state, 'dtype', type(new_state).__name__)}")
        with self.lock:
            self._engine.load_state_bytes(new_state._host().tobytes())
        return self

    @property
    def engine(self):
        return self._engine


default_generator = Generator()


def manual_seed(seed):
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """torch.random.fork_rng: the default generator's state is restored on exit."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def draw(generator, fn, *args):
    """fn(engine, *args) under the generator's lock: every random op draws through here."""
    gen = default_generator if generator is None else generator
    with gen.lock:
        return fn(gen._engine, *args)
