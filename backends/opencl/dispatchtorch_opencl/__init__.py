"""dispatchtorch's OpenCL backend: every prim as an OpenCL C kernel, on any OpenCL 1.2+
device (a GPU driver, or PoCL on a plain CPU). Importing this module is cheap: the
driver is touched only when the backend is first used."""
from dispatchtorch.backend import hookimpl


@hookimpl
def dispatchtorch_backend():
    from .backend import OpenCLBackend
    return OpenCLBackend()
