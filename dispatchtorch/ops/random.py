"""Random numbers: numpy's PCG64 on the host, one stream per Generator.

Values are drawn on the host and transferred, so a seed gives the same numbers on
every backend (and conformance inputs are reproducible). They differ from
PyTorch's own generator's numbers.
"""
from __future__ import annotations

import numpy as np

from .._device import device as Device


class Generator:
    """torch.Generator: an independent random stream."""

    def __init__(self, device="cpu"):
        self.device = Device(device)
        self._seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 2 ** 64
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        self.manual_seed(int(np.random.SeedSequence().entropy % (2 ** 63)))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from . import creation
        state = repr(self._rng.bit_generator.state).encode()
        return creation.tensor(list(state), dtype="uint8")

    def set_state(self, new_state):
        import ast
        state = ast.literal_eval(bytes(new_state.tolist()).decode())
        self._rng.bit_generator.state = state
        return self

    @property
    def rng(self):
        return self._rng


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


def rng(generator=None):
    return (generator or default_generator)._rng
