"""torch.distributed.algorithms: Join for uneven inputs, DDP communication hooks
(ddp_comm_hooks)."""
from .join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
