"""torch.UntypedStorage, torch.TypedStorage and the legacy torch.FloatStorage-style classes.

A storage here is a backend handle that tensors hold; a storage object is a window on
one: a flat tensor over all of the handle's elements (in the handle's own dtype),
sharing its memory and version counter, and the bytes through the backend's
`reinterpret` (the CPU reference has it; a backend without it gives sizes, pointers and
copies but no byte access, and says so). `tensor.untyped_storage()` returns the same
object while it lives, as PyTorch does, so `a.untyped_storage() is b.untyped_storage()`
tells whether two tensors share memory. A storage cannot change its size (views hold
the handle directly; see resize_ops.py), so `resize_` to another size raises.
"""
from __future__ import annotations

import warnings
import weakref

from . import _dtype as D
from ._run import storage_of

_BY_HANDLE: "weakref.WeakValueDictionary[int, UntypedStorage]" = weakref.WeakValueDictionary()
_WARNED = [False]
_TYPED_WARNING = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
                  "will be the only storage class. This should only matter to you if you are "
                  "using storages directly.  To access UntypedStorage directly, use "
                  "tensor.untyped_storage() instead of tensor.storage()")


def warn_typed(stacklevel=3):
    """PyTorch's deprecation warning for TypedStorage, the first time in the process."""
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=stacklevel)


def _flat(t):
    """A 1-D tensor over every element of t's storage, in t's dtype, aliasing it."""
    from .ops.resize_ops import capacity
    from .ops.retyped import retyped_view
    return retyped_view(t, t._dtype, (capacity(t),), (1,), 0, "untyped_storage", base=False)


def of_tensor(t):
    """The UntypedStorage of t's storage (the same object while one is alive)."""
    handle = storage_of(t)
    s = _BY_HANDLE.get(id(handle))
    if s is None or storage_of(s._elements) is not handle:
        s = UntypedStorage._wrap(_flat(t))
        _BY_HANDLE[id(handle)] = s
    return s


def _invalid(cls_name, got):
    return TypeError(f"torch.{cls_name}() received an invalid combination of arguments - got "
                     f"({got}), but expected one of:\n"
                     f" * (*, int allocator = None, torch.device device = None)\n"
                     f" * (int size, *, int allocator = None, torch.device device = None)\n"
                     f" * (object sequence, *, int allocator = None, torch.device device = None)\n")


def _made(args, dtype, device, cls_name):
    """The flat tensor a storage constructor's (), (size) or (sequence) asks for."""
    from . import ops
    if not args:
        return ops.empty(0, dtype=dtype, device=device)
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, int) and not isinstance(arg, bool):
            return ops.empty(arg, dtype=dtype, device=device)
        if not isinstance(arg, (list, tuple, range)):
            raise RuntimeError(f"torch.{cls_name}(): Expected a sequence type, but got "
                               f"{type(arg).__name__}")
        return ops.tensor(list(arg), dtype=dtype, device=device)
    raise _invalid(cls_name, ", ".join(type(a).__name__ for a in args))


class _StorageMethods:
    """What both storage classes do through their flat `_elements` tensor."""

    __slots__ = ()

    @property
    def device(self):
        return self._elements.device

    @property
    def is_cuda(self):
        return self._elements.device.type == "cuda"

    def data_ptr(self):
        return self._elements.data_ptr()

    def nbytes(self):
        return self._elements.numel() * self._elements._dtype.itemsize

    def is_shared(self):
        return self._elements.is_shared()

    def is_pinned(self, device="cuda"):
        return False

    def resizable(self):
        root = self._elements
        return root.__dict__.get("_resizable", True) is not False

    def get_device(self):
        return self._elements.get_device()

    def _check_index(self, i, n):
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise TypeError(f"can't index a {self._kind()} with {type(i).__name__}")
        i = i.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i

    def __iter__(self):
        return iter(self.tolist())

    def __len__(self):
        return self.size()

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        memo = {} if memo is None else memo
        if id(self) not in memo:
            memo[id(self)] = self.clone()
        return memo[id(self)]

    def __reduce__(self):
        raise NotImplementedError(f"pickling a {self._kind()} is not supported here: save the "
                                  f"tensors that use it (torch.save keeps their sharing)")

    def __repr__(self):
        values = "".join(f" {v}\n" for v in self.tolist())
        return f"{values}[{self._header()} of size {self.size()}]"

    __str__ = __repr__


class UntypedStorage(_StorageMethods):
    """A storage seen as bytes (torch.UntypedStorage)."""

    __slots__ = ("_elements", "__weakref__")

    def __init__(self, *args, device=None, allocator=None):
        self._elements = _made(args, D.uint8, device, "UntypedStorage")

    @classmethod
    def _wrap(cls, elements):
        s = object.__new__(cls)
        s._elements = elements
        return s

    def _kind(self):
        return "UntypedStorage"

    def _header(self):
        return f"torch.storage.UntypedStorage(device={self.device})"

    def _bytes(self):
        """The storage's bytes as a uint8 tensor (the backend's reinterpret)."""
        from .ops.retyped import retyped_view
        e = self._elements
        if e._dtype is D.uint8:
            return e
        return retyped_view(e, D.uint8, (self.nbytes(),), (1,), 0, "UntypedStorage", base=False)

    def size(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise NotImplementedError("UntypedStorage.type(dtype) is not supported here")

    def untyped(self):
        return self

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 "
                                   f"is supported")
            return UntypedStorage._wrap(self._bytes()[start:max(start, stop)])
        return int(self._bytes()[self._check_index(i, self.nbytes())].item())

    def __setitem__(self, i, value):
        b = self._bytes()
        if isinstance(i, slice):
            b[i] = value
        else:
            b[self._check_index(i, self.nbytes())] = value

    def tolist(self):
        return self._bytes().tolist()

    def fill_(self, value):
        self._bytes().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        if not isinstance(source, (UntypedStorage, TypedStorage)):
            raise TypeError(f"copy_(): argument 'src' must be a storage, not {type(source).__name__}")
        src = source.untyped()._bytes()
        if src.numel() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was "
                               f"{src.numel()} bytes")
        self._bytes().copy_(src)
        return self

    def clone(self):
        return UntypedStorage._wrap(self._elements.clone())

    def to(self, *, device=None, non_blocking=False):
        from ._device import device as as_device
        if device is None or as_device(device) == self.device:
            return self
        return UntypedStorage._wrap(self._elements.to(device))

    def cpu(self):
        return self.to(device="cpu")

    def resize_(self, size):
        if size == self.nbytes():
            return self
        raise NotImplementedError(
            f"UntypedStorage.resize_({size}) of a storage of {self.nbytes()} bytes is not "
            f"supported: a storage here is a fixed-size backend handle that tensors hold "
            f"directly, so it cannot change under them; allocate a new tensor instead")


class TypedStorage(_StorageMethods):
    """A storage seen as elements of one dtype (torch.TypedStorage, deprecated in PyTorch)."""

    __slots__ = ("_elements", "_untyped_storage", "dtype")

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if not _internal:
            warn_typed()
        fixed = getattr(type(self), "_fixed_dtype", None)
        self.dtype = fixed or dtype or D.get_default_dtype()
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("No positional arguments or device may be given with "
                                   "wrap_storage")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a torch.UntypedStorage as wrap_storage, got "
                                f"{type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            self._elements = _retyped(wrap_storage, self.dtype)
            return
        self._elements = _made(args, self.dtype, device, type(self).__name__)
        self._untyped_storage = of_tensor(self._elements)

    def _kind(self):
        return "TypedStorage"

    def _header(self):
        return f"torch.storage.TypedStorage(dtype={self.dtype}, device={self.device})"

    def size(self):
        return self._elements.numel()

    def element_size(self):
        return self.dtype.itemsize

    def untyped(self):
        return self._untyped_storage

    def pickle_storage_type(self):
        return _LEGACY_NAMES[self.dtype.name]

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            prefix = "" if self.device.type == "cpu" else f"{self.device.type}."
            return f"torch.{prefix}{_LEGACY_NAMES[self.dtype.name]}"
        raise NotImplementedError("TypedStorage.type(dtype) is not supported here")

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._elements[self._check_index(i, self.size())].item()

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            self._elements[i] = value
        else:
            self._elements[self._check_index(i, self.size())] = value

    def tolist(self):
        return self._elements.tolist()

    def fill_(self, value):
        self._elements.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = source._elements if isinstance(source, TypedStorage) else None
        if src is None:
            raise TypeError(f"copy_(): argument 'src' must be a TypedStorage, not "
                            f"{type(source).__name__}")
        self._elements.copy_(src)
        return self

    def clone(self):
        return _typed(self._elements.clone())

    def to(self, *, device=None, non_blocking=False):
        from ._device import device as as_device
        if device is None or as_device(device) == self.device:
            return self
        return _typed(self._elements.to(device))

    def cpu(self):
        return self.to(device="cpu")

    def resize_(self, size):
        if size == self.size():
            return self
        raise NotImplementedError(
            f"TypedStorage.resize_({size}) of a storage of {self.size()} elements is not "
            f"supported: a storage here is a fixed-size backend handle that tensors hold "
            f"directly, so it cannot change under them; allocate a new tensor instead")

    def _to_dtype(self, dtype):
        return _typed(self._elements.to(dtype))


def _retyped(untyped, dtype):
    """untyped's memory as a flat tensor of dtype (whole elements only)."""
    from .ops.retyped import retyped_view
    e = untyped._elements
    n = untyped.nbytes() // dtype.itemsize
    return retyped_view(e, dtype, (n,), (1,), 0, "TypedStorage", base=False)


def _typed(elements):
    """A TypedStorage over flat `elements` (no deprecation warning: made internally)."""
    return TypedStorage(wrap_storage=of_tensor(elements), dtype=elements._dtype, _internal=True)


def typed_of_tensor(t):
    """Tensor.storage(): a TypedStorage of t's dtype over t's storage."""
    return TypedStorage(wrap_storage=of_tensor(t), dtype=t._dtype, _internal=True)


for _name, _dt in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                   ("short", D.int16), ("char", D.int8), ("byte", D.uint8), ("bool", D.bool_),
                   ("complex_float", D.complex64), ("complex_double", D.complex128)):
    setattr(TypedStorage, _name, lambda self, _dt=_dt: self._to_dtype(_dt))

_LEGACY_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                 "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                 "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
                 "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
                 "complex128": "ComplexDoubleStorage"}


class _LegacyMeta(type):
    """isinstance(t.storage(), torch.FloatStorage) holds for a float32 TypedStorage, as
    PyTorch's _LegacyStorageMeta makes it."""

    def __instancecheck__(cls, instance):
        if type.__instancecheck__(cls, instance):
            return True
        return isinstance(instance, TypedStorage) and instance.dtype is cls._fixed_dtype


def _legacy_class(dtype):
    name = _LEGACY_NAMES[dtype.name]
    cls = _LegacyMeta(name, (TypedStorage,), {"__slots__": (), "_fixed_dtype": dtype,
                                              "__module__": "torch", "__qualname__": name})
    return cls


LEGACY = {_LEGACY_NAMES[d.name]: _legacy_class(d) for d in
          (D.float32, D.float64, D.float16, D.bfloat16, D.int64, D.int32, D.int16, D.int8,
           D.uint8, D.bool_, D.complex64, D.complex128)}


def storage_type(t):
    """Tensor.storage_type(): the legacy class of t's dtype (with PyTorch's warning)."""
    warn_typed()
    return LEGACY[_LEGACY_NAMES[t._dtype.name]]


def is_storage(obj):
    return isinstance(obj, (UntypedStorage, TypedStorage))


def as_flat_of(storage, dtype):
    """A storage's memory as a flat tensor of dtype, for Tensor.set_."""
    if isinstance(storage, TypedStorage):
        return storage._elements
    e = storage._elements
    if e._dtype is dtype:
        return e
    return _retyped(storage, dtype)


PUBLIC = {"UntypedStorage": UntypedStorage, "TypedStorage": TypedStorage, "is_storage": is_storage,
          **LEGACY}
