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

    _rebuilder = "_rebuild_parameter"     # what Tensor.__reduce_ex__ pickles it with


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        t = _adopt(cls, data)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedTensorMixin:
    """A placeholder without a shape yet: lazy modules materialize() it on their
    first call, when the input's shape is known."""

    cls_to_become = Tensor

    def materialize(self, shape, device=None, dtype=None):
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = _ops.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to load "
                           "an uninitialized parameter into an initialized one. Call "
                           "`forward` to initialize the parameters before accessing their "
                           "attributes.")

    def numel(self):
        raise RuntimeError("Can't access the number of elements of an uninitialized parameter "
                           "or buffer. Call `forward` to initialize the parameters before "
                           "accessing their attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _ops.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _adopt(cls, _ops.empty(0, device=device, dtype=dtype))
        t.requires_grad_(requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass
