"""The error fullgraph=True raises (torch._dynamo.exc.Unsupported); light to import."""


class Unsupported(RuntimeError):
    """fullgraph=True and the function breaks the graph (torch._dynamo.exc.Unsupported)."""


class ConstraintViolationError(RuntimeError):
    """A dim marked with torch._dynamo.mark_dynamic that the program specialises
    (torch.fx.experimental.symbolic_shapes.ConstraintViolationError)."""


class UncapturedHigherOrderOpError(RuntimeError):
    """torch.cond refused a branch PyTorch's tracing cannot capture (an output that is not
    a tensor or an int, aliases an operand, or a mutated operand)
    (torch._dynamo.exc.UncapturedHigherOrderOpError)."""
