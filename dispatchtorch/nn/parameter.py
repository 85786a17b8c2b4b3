"""nn.Parameter and nn.Buffer: tensors that a Module registers when assigned."""
from __future__ import annotations

from .. import ops as _ops
from .._tensor import Tensor


def _adopt(cls, data):
    """An object of class cls sharing data's memory and version counter, outside any graph."""
    if data is None:
        data = _ops.empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"{cls.__name__}: data must be a Tensor, got {type(data).__name__}")
    t = object.__new__(cls)
    t.__dict__.update(data.detach().__dict__)
    return t


class Parameter(Tensor):
    """A leaf tensor that requires grad and that a Module lists in parameters()."""

    def __new__(cls, data=None, requires_grad=True):
        t = _adopt(cls, data)
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        from ..serialization import _rebuild_parameter
        return (_rebuild_parameter, (self.detach().cpu().numpy().copy(), str(self.device),
                                     self.requires_grad))


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        t = _adopt(cls, data)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass
