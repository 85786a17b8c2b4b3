"""torch.distributed.fsdp: FullyShardedDataParallel (FSDP1, flat parameters sharded over
the ranks, use_orig_params=False) and its configuration types; see docs/distributed.md.
FSDP2's fully_shard needs DTensor, which dispatchtorch does not have."""
from __future__ import annotations

from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalStateDictConfig, MixedPrecision, OptimStateDictConfig,
                  ShardedStateDictConfig, ShardingStrategy, StateDictConfig, StateDictSettings,
                  StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
           "FullyShardedDataParallel", "LocalStateDictConfig", "MixedPrecision",
           "OptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy",
           "StateDictConfig", "StateDictSettings", "StateDictType"]
