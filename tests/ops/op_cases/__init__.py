"""Every sample case, by category (one module each)."""
from . import elementwise, reductions

CASES = [*elementwise.CASES, *reductions.CASES]
