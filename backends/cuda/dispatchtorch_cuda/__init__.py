"""dispatchtorch's CUDA backend: every prim on NVIDIA GPUs through cupy.

Importing this module is cheap and never touches the driver; the hook below builds
the backend (imports cupy, counts devices) the first time `cuda` is used or listed.
"""
from dispatchtorch.backend import hookimpl


@hookimpl
def dispatchtorch_backend():
    from .backend import create_backend
    return create_backend()
