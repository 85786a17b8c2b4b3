"""torch.random: the default CPU generator's seed and state, and fork_rng."""
from .ops.random import (default_generator, fork_rng, get_rng_state, initial_seed,  # noqa: F401
                         manual_seed, seed, set_rng_state)

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]
