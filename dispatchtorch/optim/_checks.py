"""The argument checks PyTorch's optimizers share, with PyTorch's messages."""
from __future__ import annotations

_LABEL = {"lr": "learning rate", "eps": "epsilon value"}


def check_nonnegative(**values):
    """ValueError("Invalid learning rate: -1") and the like, for any negative value."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {_LABEL.get(name, name + ' value')}: {v}")


def check_betas(betas):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
