"""dispatchtorch.special: torch.special, made from the op rows (each row's Forms.special
names, and a `special_<x>` row as `<x>`) and the few functions without a row."""
from . import ops as _ops  # noqa: F401  (every op row is declared once the ops load)
from .dispatch.registry import special_functions as _special_functions
from .ops.special_functions import SPECIAL_WITHOUT_ROWS as _WITHOUT_ROWS
from .ops.orthogonal_polynomials import SPECIAL as _POLYNOMIALS

globals().update(_special_functions())
globals().update(_WITHOUT_ROWS)
globals().update(_POLYNOMIALS)

_REQUIRED = object()


def softmax(input, dim=_REQUIRED, dtype=None):
    """torch.special.softmax: torch.softmax under its special_ name (and errors)."""
    if dim is _REQUIRED:
        raise TypeError('special_softmax() missing 1 required positional arguments: "dim"')
    return _ops.softmax(input, dim, dtype)


def log_softmax(input, dim=_REQUIRED, dtype=None):
    """torch.special.log_softmax: torch.log_softmax under its special_ name."""
    if dim is _REQUIRED:
        raise TypeError('special_log_softmax() missing 1 required positional arguments: "dim"')
    return _ops.log_softmax(input, dim, dtype)
