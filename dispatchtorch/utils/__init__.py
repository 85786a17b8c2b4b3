"""dispatchtorch.utils: data loading, activation checkpointing, pytrees, hook handles."""
from . import data  # noqa: F401


def __getattr__(name):
    # torch.utils.checkpoint / _pytree / hooks without an import of their own, as in
    # PyTorch; loaded on first use
    if name in ("checkpoint", "_pytree", "hooks"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'dispatchtorch.utils' has no attribute '{name}'")
