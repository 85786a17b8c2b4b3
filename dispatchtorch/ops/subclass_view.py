"""Tensor.as_subclass(cls): the same memory as an instance of a Tensor subclass, and (as
PyTorch's alias) still in self's graph: a leaf that requires grad gets its gradient
through it."""
from __future__ import annotations

from .._tensor import Tensor
from . import views


def as_subclass(self, cls):
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    v = views.view(self, *self.shape)       # an identity view: recorded, aliasing self
    v.__class__ = cls
    return v


METHODS = {"as_subclass": as_subclass}
