"""dispatchtorch's `remote` device: tensors held by a worker process, ops sent over a
socketpair. An example third-party backend built from the public backend kit only."""
from dispatchtorch.backend import hookimpl


@hookimpl
def dispatchtorch_backend():
    from .backend import RemoteBackend
    return RemoteBackend()
