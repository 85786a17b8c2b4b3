"""torch._dynamo.exc: the error fullgraph=True raises at a graph break."""
from .._compile.errors import Unsupported

__all__ = ["Unsupported"]
