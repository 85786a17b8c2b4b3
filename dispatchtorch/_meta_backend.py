"""The `meta` device: tensors with a shape and a dtype but no data, like PyTorch's.

The frontend infers every output's shape and dtype and allocates the outputs before
it calls a kernel, so this backend only has to hand out shape-only handles and run
kernels that do nothing. A model built on `meta` reports its parameter shapes and a
forward pass reports its output shapes, without allocating the memory. Anything
that reads values ends in `to_host`, which raises `NoDataError`.

It ships with the core (entry point `meta` in the root pyproject.toml) but is an
ordinary backend: it imports the backend API only.
"""
from __future__ import annotations

from dispatchtorch.backend import ALL_DTYPE_NAMES, ITEMSIZE, PRIMS, Backend, DeviceInfo, hookimpl


class NoDataError(NotImplementedError):
    """Raised when values of a meta tensor are needed. A NotImplementedError (so a
    RuntimeError too), as PyTorch's "Cannot copy out of meta tensor; no data!"."""


NO_DATA = ("Cannot copy out of meta tensor; no data! Tensors on the meta device have a shape "
           "and a dtype only, so nothing that reads values works on them: .item(), .tolist(), "
           ".numpy(), .cpu() / .to() another device, printing values, nonzero, masked_select, "
           "boolean-mask indexing and index bounds checks. Move the computation to a real "
           "device, or use meta only to infer shapes and dtypes.")


class MetaHandle:
    """Shape and dtype, plus the storage it views (so views alias, as handles must)."""

    __slots__ = ("shape", "dtype", "storage")

    def __init__(self, shape, dtype, storage=None):
        self.shape, self.dtype = tuple(shape), dtype
        self.storage = self if storage is None else storage

    def __repr__(self):
        return f"<meta {self.dtype}{list(self.shape)}>"


def _noop(*handles, **params):
    """Every kernel: the outputs were allocated by the frontend, there is nothing to compute."""


class MetaBackend(Backend):
    name = "meta"
    api_version = (1, 0)
    kernels = {name: _noop for name in PRIMS}

    def devices(self):
        return [DeviceInfo(0, "meta (shapes and dtypes only, no data)", frozenset(ALL_DTYPE_NAMES),
                           {"data": False})]

    def empty(self, shape, dtype, device):
        return MetaHandle(shape, dtype)

    def from_host(self, array, device, copy=True):
        return MetaHandle(array.shape, array.dtype.name)

    def to_host(self, handle):
        raise NoDataError(NO_DATA)

    def as_strided(self, storage, shape, strides, offset):
        return MetaHandle(shape, storage.dtype, storage.storage)

    def reinterpret(self, storage, dtype):
        """view(dtype): the storage's bytes counted in `dtype` (aliasing it, as views do)."""
        n = ITEMSIZE[storage.dtype]
        for size in storage.shape:
            n *= size
        n //= ITEMSIZE[dtype]
        return MetaHandle((n,), dtype, storage.storage)

    def copy_(self, dst, src):
        pass

    def fill_(self, dst, value):
        pass


@hookimpl
def dispatchtorch_backend():
    return MetaBackend()
