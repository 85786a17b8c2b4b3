"""torch.distributed.algorithms.ddp_comm_hooks: the hook types by name, and
register_ddp_comm_hook (the quantization hooks and batched PowerSGD are absent)."""
from __future__ import annotations

import enum
from functools import partial

from . import debugging_hooks as debugging
from . import default_hooks as default
from . import powerSGD_hook as powerSGD

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]

_member = getattr(enum, "member", lambda x: x)     # a partial stays a member on 3.13+


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


def _powerSGD_comm_hook_wrapper(comm_hook, model, state, matrix_approximation_rank,
                                start_powerSGD_iter=1_000):
    """`state` is the process group; the PowerSGDState is made here."""
    model.register_comm_hook(powerSGD.PowerSGDState(
        process_group=state, matrix_approximation_rank=matrix_approximation_rank,
        start_powerSGD_iter=start_powerSGD_iter), comm_hook)


class DDPCommHookType(enum.Enum):
    """`DDPCommHookType.ALLREDUCE.value(model=ddp, state=process_group)` registers it."""

    ALLREDUCE = _member(partial(_ddp_comm_hook_wrapper, comm_hook=default.allreduce_hook))
    FP16_COMPRESS = _member(partial(_ddp_comm_hook_wrapper,
                                    comm_hook=default.fp16_compress_hook))
    BF16_COMPRESS = _member(partial(_ddp_comm_hook_wrapper,
                                    comm_hook=default.bf16_compress_hook))
    POWER_SGD = _member(partial(_powerSGD_comm_hook_wrapper, comm_hook=powerSGD.powerSGD_hook,
                                matrix_approximation_rank=1))
    POWER_SGD_RANK2 = _member(partial(_powerSGD_comm_hook_wrapper,
                                      comm_hook=powerSGD.powerSGD_hook,
                                      matrix_approximation_rank=2))
    NOOP = _member(partial(_ddp_comm_hook_wrapper, comm_hook=debugging.noop_hook))


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Register the hook `comm_hook_type` names on the DDP `model`."""
    comm_hook_type.value(model=model, state=state)
