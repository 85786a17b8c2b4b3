"""The legacy tensor types (torch.FloatTensor, torch.LongTensor, ...; torch.cuda.*Tensor):
constructors (a shape, or data) and isinstance checks by dtype and device type, as in
PyTorch."""
from __future__ import annotations

import numbers

from . import _dtype as D
from ._shape import Size
from ._tensor import Tensor

NAMES = {"DoubleTensor": "float64", "FloatTensor": "float32", "HalfTensor": "float16",
         "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
         "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64",
         "BoolTensor": "bool"}


class _TensorType(type):
    """isinstance(t, torch.FloatTensor): t is a float32 tensor on that device type."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls._device_type

    def __call__(cls, *args, device=None):
        from . import ops
        dev = cls._device_type if device is None else device
        name = f"{cls.__module__}.{cls.__name__}"
        if not args:
            return ops.empty(0, dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not cls.dtype:
                raise TypeError(f"expected {cls.dtype.pt_name} (got {t.dtype.pt_name})")
            return t
        if len(args) == 1 and isinstance(args[0], Size):
            return ops.empty(tuple(args[0]), dtype=cls.dtype, device=dev)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return ops.empty(tuple(int(a) for a in args), dtype=cls.dtype, device=dev)
        if len(args) == 1 and not isinstance(args[0], (numbers.Number, str)):
            return ops.tensor(args[0], dtype=cls.dtype, device=dev)
        raise TypeError(f"{name}(): expected a size (ints), data (a sequence) or a tensor, got "
                        f"({', '.join(type(a).__name__ for a in args)})")

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def make(device_type, module):
    """{name: type} for one device type."""
    out = {}
    for name, dtype in NAMES.items():
        cls = _TensorType(name, (), {"dtype": D.BY_NAME[dtype], "_device_type": device_type,
                                     "is_cuda": device_type == "cuda", "is_sparse": False,
                                     "__module__": module,
                                     "__doc__": f"The legacy {dtype} tensor type on "
                                                f"{device_type}."})
        out[name] = cls
    return out


def _from_name(name):
    """'torch.cuda.LongTensor' / 'dispatchtorch.FloatTensor' -> (device type, dtype)."""
    parts = name.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "dispatchtorch") and parts[-1] in NAMES:
        return (parts[1] if len(parts) == 3 else "cpu"), D.BY_NAME[NAMES[parts[-1]]]
    return None


def type_method(original):
    """Tensor.type that also takes a legacy type (class or name), moving the tensor to
    its device type as PyTorch does (x.type(torch.cuda.FloatTensor))."""
    def type(self, dtype=None, non_blocking=False, **kwargs):
        target = None
        if isinstance(dtype, _TensorType):
            target = (dtype._device_type, dtype.dtype)
        elif isinstance(dtype, str):
            target = _from_name(dtype)
        if target is None:
            return original(self, dtype, non_blocking, **kwargs)
        device_type, dt = target
        if self.dtype is dt and self.device.type == device_type:
            return self
        device = self.device if self.device.type == device_type else device_type
        return self.to(device=device, dtype=dt)
    type.__doc__ = original.__doc__
    type.__wrapped__ = original
    return type
