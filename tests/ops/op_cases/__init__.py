"""Every sample case, by category (one module each)."""
from . import creation, elementwise, linalg, opset, reductions, shape_indexing

CASES = [*elementwise.CASES, *reductions.CASES, *linalg.CASES, *shape_indexing.CASES,
         *creation.CASES, *opset.CASES]
