"""dispatchtorch.utils: data loading, activation checkpointing."""
from . import data  # noqa: F401


def __getattr__(name):
    # torch.utils.checkpoint without an import of its own, as in PyTorch; loaded on first use
    if name == "checkpoint":
        import importlib
        return importlib.import_module(".checkpoint", __name__)
    raise AttributeError(f"module 'dispatchtorch.utils' has no attribute '{name}'")
