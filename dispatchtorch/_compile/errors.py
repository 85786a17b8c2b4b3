"""The error fullgraph=True raises (torch._dynamo.exc.Unsupported); light to import."""


class Unsupported(RuntimeError):
    """fullgraph=True and the function breaks the graph (torch._dynamo.exc.Unsupported)."""
