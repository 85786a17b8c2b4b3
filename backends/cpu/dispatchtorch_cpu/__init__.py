"""dispatchtorch's reference backend: every prim in numpy on the host."""
from dispatchtorch.backend import hookimpl


@hookimpl
def dispatchtorch_backend():
    from .backend import CPUBackend
    return CPUBackend()
