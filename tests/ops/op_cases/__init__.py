"""Every sample case, by category (one module each)."""
from . import elementwise, linalg, reductions

CASES = [*elementwise.CASES, *reductions.CASES, *linalg.CASES]
