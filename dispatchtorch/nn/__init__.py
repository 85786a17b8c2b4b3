"""dispatchtorch.nn: PyTorch's layers, written only in public ops, so every model runs
on whichever backend its tensors live on."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _layers
from .parameter import Buffer, Parameter  # noqa: F401
from . import parallel  # noqa: F401,E402  (torch.nn.parallel.DistributedDataParallel)

__all__ = ["Buffer", "Parameter", "functional", "init", "utils", *_layers]
