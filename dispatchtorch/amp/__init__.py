"""dispatchtorch.amp: automatic mixed precision (torch.amp): autocast with PyTorch's
per-op policy, and GradScaler."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
