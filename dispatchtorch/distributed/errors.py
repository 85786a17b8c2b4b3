"""torch.distributed's exception classes, with PyTorch's hierarchy (all RuntimeErrors,
so `except RuntimeError` code written for PyTorch still catches them)."""
from __future__ import annotations


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a backend error occurs in distributed."""


class DistNetworkError(DistError):
    """Raised when a network error occurs in distributed."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class QueueEmptyError(DistStoreError):
    """Raised when a store queue is empty."""


for _c in (DistError, DistBackendError, DistNetworkError, DistStoreError, QueueEmptyError):
    _c.__module__ = "dispatchtorch.distributed"
