"""dispatchtorch.fft: torch.fft's transforms (ops/fft_ops.py), on the fft_c2c / fft_r2c /
fft_c2r prims."""
from .ops.fft_ops import PUBLIC as _P

globals().update(_P)
__all__ = sorted(_P)
