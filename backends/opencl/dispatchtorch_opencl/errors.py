"""The errors this backend raises, each naming what failed and why."""
from __future__ import annotations

from dispatchtorch.backend import BackendError


class KernelBuildError(BackendError):
    """An OpenCL program failed to build: the message names the op, dtypes, device
    and carries the compiler's log."""


class KernelLaunchError(BackendError):
    """Enqueueing a kernel failed (invalid arguments, resources)."""


class OutOfMemoryError(BackendError, MemoryError):
    """The device could not allocate a buffer. Nothing was written: every existing
    tensor is as it was."""


def mib(nbytes):
    return f"{nbytes / 2**20:.1f} MiB"
