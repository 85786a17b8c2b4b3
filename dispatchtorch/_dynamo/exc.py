"""torch._dynamo.exc: the error fullgraph=True raises at a graph break, the one a
mark_dynamic'ed dim the program pins raises, and torch.cond's refusal of a branch."""
from .._compile.errors import ConstraintViolationError, UncapturedHigherOrderOpError, Unsupported

__all__ = ["Unsupported", "ConstraintViolationError", "UncapturedHigherOrderOpError"]
