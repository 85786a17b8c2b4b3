"""What backends are installed and what state they are in (`python -m dispatchtorch.backends`)."""
from __future__ import annotations

from ..dispatch import get_fallback_mode, list_backends, set_fallback_mode

__all__ = ["list_backends", "report", "set_fallback_mode", "get_fallback_mode"]


def report() -> list[dict]:
    """Every discovered backend as a dict: name, distribution, version, status, devices, ..."""
    return [rt.as_dict() for rt in list_backends()]

from .flags import cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: E402,F401
