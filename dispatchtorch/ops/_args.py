"""The public forms' argument helpers every op module uses: the input-is-a-tensor check
and `out=`. They need no op, so they sit at the bottom of ops/ (see pyproject.toml)."""
from __future__ import annotations

from .._tensor import Tensor


def check_tensor(x, name, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def write_out(out, r):
    """Honour an `out=` argument: copy into it (resizing it if its shape differs)."""
    if out is None:
        return r
    if out._shape == r._shape and out._dtype is r._dtype:
        return out.copy_(r)
    out.data = r.to(out.dtype) if out._dtype is not r._dtype else r
    return out
