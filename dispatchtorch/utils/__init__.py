"""dispatchtorch.utils: data loading, activation checkpointing, pytrees, hook handles,
swap_tensors."""
from . import data, hooks  # noqa: F401
from .swap import swap_tensors  # noqa: F401


def __getattr__(name):
    # torch.utils.checkpoint and torch.utils._pytree without an import of their own, as in
    # PyTorch (whose `import torch` loads both); loaded on first use
    if name in ("checkpoint", "_pytree"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'dispatchtorch.utils' has no attribute '{name}'")
