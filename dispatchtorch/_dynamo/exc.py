"""torch._dynamo.exc: the error fullgraph=True raises at a graph break."""
from .._compile.compiled import Unsupported

__all__ = ["Unsupported"]
