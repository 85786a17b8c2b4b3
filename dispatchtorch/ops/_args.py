"""The public forms' argument helpers every op module uses: the input-is-a-tensor check
and `out=`. They need no op, so they sit at the bottom of ops/ (see pyproject.toml)."""
from __future__ import annotations

from .._tensor import Tensor


def check_tensor(x, name, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


from ._out import write_out  # noqa: E402,F401  (out=: the one check and write, ops/_out.py)
