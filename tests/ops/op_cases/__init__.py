"""Every sample case, by category (one module each)."""
from . import elementwise

CASES = [*elementwise.CASES]
