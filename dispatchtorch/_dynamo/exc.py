"""torch._dynamo.exc: the error fullgraph=True raises at a graph break, and the one a
mark_dynamic'ed dim the program pins raises."""
from .._compile.errors import ConstraintViolationError, Unsupported

__all__ = ["Unsupported", "ConstraintViolationError"]
