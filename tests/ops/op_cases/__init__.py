"""Every sample case, by category (one module each)."""
from . import creation, elementwise, linalg, opset, reductions, shape_indexing
from . import complex as complex_cases

CASES = [*elementwise.CASES, *reductions.CASES, *linalg.CASES, *shape_indexing.CASES,
         *creation.CASES, *opset.CASES, *complex_cases.CASES]
