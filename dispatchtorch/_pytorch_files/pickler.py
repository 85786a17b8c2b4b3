"""The pickler of torch.save's `data.pkl`: dispatchtorch tensors, parameters, dtypes,
devices, sizes, layouts and storages pickled as PyTorch pickles its own
(`torch._utils._rebuild_tensor_v2` over a persistent id ('storage', torch.FloatStorage,
key, location, numel), ...), everything else with pickle's usual rules (classes by
reference). The torch globals are written as GLOBAL opcodes by name, never imported, so
no PyTorch is needed. It builds on pickle's pure-Python pickler, whose dispatch table
can hold the stand-ins for those globals (the C pickler imports every global it writes
to check it)."""
from __future__ import annotations

import collections
import pickle

from .. import _dtype as D
from .._device import device as Device
from .._layout import layout as Layout
from .._shape import Size
from .._storage import _LEGACY_NAMES, TypedStorage, UntypedStorage
from .._tensor import Tensor

_STORAGE = "storage"      # one str object, so that the pickle memoizes it as PyTorch's does
_CPU = "cpu"


class TorchGlobal:
    """A global of PyTorch's (`torch FloatStorage`), written by name."""

    __slots__ = ("module", "name")
    _made: dict = {}

    def __new__(cls, module, name):
        g = cls._made.get((module, name))
        if g is None:
            g = cls._made[(module, name)] = object.__new__(cls)
            g.module, g.name = module, name
        return g

    def __call__(self, *args):        # pickle's save_reduce requires a callable
        raise TypeError(f"{self.module}.{self.name} is only a name written into a pickle")


def location(device):
    """The location string PyTorch's location_tag gives a storage on `device`. PyTorch has
    no OpenCL device: an OpenCL storage is saved as "cpu" (its bytes are copied to the
    host anyway), so that real PyTorch loads it."""
    if device.type in ("cpu", "opencl"):
        return _CPU
    if device.type == "cuda":
        return f"cuda:{device.index or 0}"
    return str(device)


class _Plain:
    """Parameter.data: the parameter's tensor pickled as a plain one (requires_grad off)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


class _StorageRef:
    """A storage in the pickle: becomes its persistent id."""

    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


def _address(flat):
    """Where a storage's memory starts (0: none, or a backend without addresses)."""
    try:
        return flat.data_ptr() if flat.numel() else 0
    except Exception:           # noqa: BLE001 - a backend may not expose addresses
        return 0


class StorageTable:
    """The storages the pickle names, in first-seen order: key -> (flat tensor over the
    whole storage, in the dtype it is saved as)."""

    def __init__(self, legacy=False):
        self.by_handle, self.records, self.numels, self.by_ptr = {}, {}, {}, {}
        self.legacy = legacy          # the legacy format's ids end with a None (no view)
        self.reach = {}               # id(handle) -> bytes the saved tensors reach in it

    def note(self, t):
        """Count what tensor t reaches in its storage (see measure_storages)."""
        from .._run import storage_of
        from ..ops.resize_ops import capacity
        handle = storage_of(t)
        n = capacity(t) * t._dtype.itemsize
        if n > self.reach.get(id(handle), (0,))[0]:
            self.reach[id(handle)] = (n, handle)

    def _flat(self, t):
        """The flat tensor over t's whole storage, as far as any saved tensor reaches."""
        from .._run import storage_of
        from ..ops.resize_ops import capacity
        from ..ops.retyped import retyped_view
        n = max(capacity(t), self.reach.get(id(storage_of(t)), (0,))[0] // t._dtype.itemsize)
        return retyped_view(t, t._dtype, (n,), (1,), 0, "torch.save", base=False)

    def ref(self, t, dtype, numel_in_bytes=False):
        """The persistent id for the storage of tensor t, seen as dtype."""
        from .._run import storage_of
        handle = storage_of(t)
        entry = self.by_handle.get(id(handle))
        if entry is None:
            key = str(len(self.by_handle))
            flat = self._flat(t)
            entry = self.by_handle[id(handle)] = (key, handle, dtype, flat)
            self.records[key] = flat
        key, _, saved_dtype, flat = entry
        # as PyTorch, by the memory's address: a dtype view has a handle of its own here
        ptr = _address(flat)
        if saved_dtype is not dtype or (ptr and self.by_ptr.setdefault(ptr, dtype) is not dtype):
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data "
                               "as different types")
        if dtype.name in _LEGACY_NAMES and not numel_in_bytes:
            stype, numel = TorchGlobal("torch", _LEGACY_NAMES[dtype.name]), flat.numel()
        else:                         # uint16..64, float8: an UntypedStorage of bytes
            if self.legacy and not numel_in_bytes:
                raise RuntimeError(f"torch.save: a {dtype.name} tensor cannot be saved in "
                                   f"PyTorch's legacy format (_use_new_zipfile_serialization="
                                   f"False): PyTorch's torch.load fails on such a file; use the "
                                   f"default zip format")
            stype = TorchGlobal("torch.storage", "UntypedStorage")
            numel = flat.numel() * flat._dtype.itemsize
        self.numels.setdefault(key, numel)
        if self.legacy:
            return (_STORAGE, stype, key, location(flat.device), numel, None)
        return (_STORAGE, stype, key, location(flat.device), numel)


class _Mixin:
    """What PyTorch's tensors and values become in the pickle (see the module's doc)."""

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return obj.pid
        if isinstance(obj, (UntypedStorage, TypedStorage)):
            return self._storage_pid(obj)
        return None

    def _storage_pid(self, s):
        """A storage saved itself (torch.save(t.untyped_storage()))."""
        if isinstance(s, UntypedStorage):
            return self.storages.ref(s._elements, D.uint8, numel_in_bytes=True)
        return self.storages.ref(s._elements, s.dtype)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        return NotImplemented

    def _reduce_tensor(self, t):
        from ..nn.parameter import Buffer, Parameter, UninitializedTensorMixin
        if isinstance(t, UninitializedTensorMixin):
            raise RuntimeError(f"Can't serialize an {type(t).__name__} (a lazy module's "
                               f"parameter before its first call): run the module once first")
        if t.requires_grad and t.grad_fn is not None:
            raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                               "since autograd does not support crossing process boundaries.  If "
                               "you just want to transfer the data, call detach() on the tensor "
                               "before serializing (e.g., putting it on the queue).")
        if isinstance(t, Parameter):
            return (TorchGlobal("torch._utils", "_rebuild_parameter"),
                    (_Plain(t), t.requires_grad, collections.OrderedDict()))
        if t.layout is not Tensor.layout:
            return self._reduce_sparse(t)
        if type(t) not in (Tensor, Buffer):
            raise NotImplementedError(f"torch.save of a tensor of class {type(t).__qualname__} is "
                                      f"not supported here (only Tensor, nn.Parameter, nn.Buffer "
                                      f"and sparse COO / CSR tensors)")
        return self._dense(t, t.requires_grad)

    def _dense(self, t, requires_grad):
        if t.device.type == "meta":
            return (TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage"),
                    (t.dtype, tuple([*t.shape]), tuple([*t.stride()]), requires_grad))
        if getattr(t, "is_conj", None) and t.is_conj():
            t = t.resolve_conj()            # saved as its values (PyTorch keeps the bit)
        if getattr(t, "is_neg", None) and t.is_neg():
            t = t.resolve_neg()
        dtype = t.dtype
        pid = self.storages.ref(t, dtype)
        # fresh tuples, as PyTorch's (a cached stride tuple would be memoized in the pickle)
        args = (_StorageRef(pid), t.storage_offset(), tuple([*t.shape]), tuple([*t.stride()]),
                requires_grad, collections.OrderedDict())
        if dtype.name in _LEGACY_NAMES:
            return (TorchGlobal("torch._utils", "_rebuild_tensor_v2"), args)
        return (TorchGlobal("torch._utils", "_rebuild_tensor_v3"), args + (dtype,))

    def _reduce_sparse(self, t):
        if t.is_sparse:
            data = (t._indices(), t._values(), Size(t.shape), bool(t.is_coalesced()))
        else:
            data = (t.crow_indices(), t.col_indices(), t.values(), Size(t.shape))
        return (TorchGlobal("torch._utils", "_rebuild_sparse_tensor"), (t.layout, data))

    def save_plain(self, obj):
        self.save_reduce(*self._dense(obj.t, False), obj=obj)

    def _global(self, module, name, obj):
        """pickle's save_global for a name it must not import; obj is memoized."""
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    def save_torch_global(self, obj):
        self._global(obj.module, obj.name, obj)

    def save_dtype(self, obj):
        self._global("torch", obj.name, obj)

    def save_device(self, obj):
        kind = obj.type.encode().decode()     # a fresh str as PyTorch's (not the memoized "cpu")
        args = (kind,) if obj.index is None else (kind, obj.index)
        self.save_reduce(TorchGlobal("torch", "device"), args, obj=obj)

    def save_size(self, obj):
        self.save_reduce(TorchGlobal("torch", "Size"), (tuple(obj),), obj=obj)

    def save_layout(self, obj):
        self.save_reduce(TorchGlobal("torch.serialization", "_get_layout"),
                         (f"torch.{obj.name}",), obj=obj)


def pickler_class(pickle_module):
    """A pickler class over pickle_module's (pickle's pure-Python one for `pickle`)."""
    base = pickle._Pickler if pickle_module is None or pickle_module is pickle else \
        getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise NotImplementedError(f"torch.save: pickle_module {getattr(pickle_module, '__name__', pickle_module)!r} "
                                  f"is not supported here (its Pickler must build on pickle's "
                                  f"pure-Python pickle._Pickler, as pickle's and dill's do)")
    dispatch = dict(base.dispatch)
    dispatch.update({TorchGlobal: _Mixin.save_torch_global, D.dtype: _Mixin.save_dtype,
                     Device: _Mixin.save_device, Size: _Mixin.save_size,
                     Layout: _Mixin.save_layout, _Plain: _Mixin.save_plain})
    return type("TorchFormatPickler", (_Mixin, base), {"dispatch": dispatch})


class _Measure(pickle.Pickler):
    """A first pass (pickle's C pickler, output discarded) that notes every tensor the
    object holds, so that a storage is saved as far as any of its tensors reaches: a
    detached view (x[2:4].detach()) knows only its own extent, and a later tensor over the
    same memory may reach further."""

    def __init__(self, file, protocol, storages):
        super().__init__(file, protocol=protocol)
        self.storages = storages

    def persistent_id(self, obj):
        if isinstance(obj, (UntypedStorage, TypedStorage)):
            self.storages.note(obj._elements)
            return "storage"
        return None

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.layout is not Tensor.layout:
            parts = (obj._indices(), obj._values()) if obj.is_sparse else \
                (obj.crow_indices(), obj.col_indices(), obj.values())
        else:
            parts = (obj,) if obj.device.type != "meta" else ()
        for p in parts:
            self.storages.note(p)
        return (int, ())


def measure_storages(obj, storages, protocol):
    """Run the _Measure pass; anything it cannot pickle is left to the real pass, which
    raises pickle's own error for it."""
    import io
    try:
        _Measure(io.BytesIO(), min(protocol, pickle.HIGHEST_PROTOCOL), storages).dump(obj)
    except Exception:               # noqa: BLE001 - the real pass reports it
        pass


def dumps(obj, storages, pickle_module=None, protocol=2):
    """(the pickle's bytes) of obj; storages (a StorageTable) collects what it names."""
    import io
    buf = io.BytesIO()
    cls = pickler_class(pickle_module)
    measure_storages(obj, storages, protocol)
    p = cls(buf, protocol=protocol)
    p.storages = storages
    p.dump(obj)
    return buf.getvalue()

