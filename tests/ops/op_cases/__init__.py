"""Every sample case, by category (one module each)."""
from . import creation, elementwise, linalg, opset, reductions, shape_indexing
from . import complex as complex_cases

# the rows no category's cases cover get cases made from the row (its forms and domain)
elementwise.row_cases({c.op for m in (elementwise, reductions, linalg, shape_indexing, creation,
                                      opset, complex_cases) for c in m.CASES})

CASES = [*elementwise.CASES, *reductions.CASES, *linalg.CASES, *shape_indexing.CASES,
         *creation.CASES, *opset.CASES, *complex_cases.CASES]
