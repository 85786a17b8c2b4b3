"""FSDP's configuration types, as torch.distributed.fsdp.api: enums and dataclasses a
training script passes to FullyShardedDataParallel."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class ShardingStrategy(Enum):
    """FULL_SHARD: parameters, gradients and optimizer state sharded; SHARD_GRAD_OP:
    parameters kept gathered from forward to backward; NO_SHARD: DDP-like. The HYBRID_*
    strategies (shard inside a node, replicate across) are refused: not done here."""
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """Accepted for compatibility: MPI collectives here run when backward reaches them."""
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class MixedPrecision:
    """param_dtype: the dtype forward and backward compute in (the sharded parameter stays
    in its own dtype); reduce_dtype: the gradient reduction's dtype (default param_dtype);
    buffer_dtype: the buffers' dtype during training (the full state dict restores theirs)."""
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = ()


@dataclass
class CPUOffload:
    """offload_params: keep the shard (and its gradient) on the CPU between uses."""
    offload_params: bool = False


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """rank0_only: only rank 0 gets the (full) state dict; the others an empty dict."""
    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
