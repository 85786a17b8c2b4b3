"""torch.nn.attention: which scaled-dot-product-attention kernels may run (sdpa_kernel),
over the same flags as torch.backends.cuda's enable_*_sdp.

There is one implementation of F.scaled_dot_product_attention here, the math one
(exact softmax of the scaled scores). It stands for the kernels PyTorch's CPU build
has, MATH and FLASH_ATTENTION (PyTorch's CPU "flash" kernel computes the same
function, blocked): with both turned off, the call raises PyTorch's "No viable
backend" error, as PyTorch's does on a CPU tensor. The set_priority order is kept
and has no effect, since there is nothing to choose between."""
from __future__ import annotations

import contextlib
import enum

from ._sdp_flags import SDP as _SDP

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(int, enum.Enum):
    """The scaled-dot-product-attention kernels PyTorch names (its values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"


SDPBackend.__module__ = __name__
# SDPBackend -> the torch.backends.cuda flag it turns on (ERROR and OVERRIDEABLE: none)
_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]


def viable():
    """Whether F.scaled_dot_product_attention may run (a kernel standing for ours is on)."""
    sdp = _SDP
    return sdp["math"] or sdp["flash"]


def _current():
    return [b for b, flag in _FLAG.items() if _SDP[flag]]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block only `backends` may run F.scaled_dot_product_attention; the
    previous flags (and priority order) come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    before, order = dict(_SDP), list(_priority)
    try:
        for b, flag in _FLAG.items():
            _SDP[flag] = b in chosen
        if set_priority:
            _priority[:] = chosen + [b for b in order if b not in chosen]
        yield {}
    finally:
        _SDP.update(before)
        _priority[:] = order
