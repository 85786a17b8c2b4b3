"""The Tensor: frontend metadata around a backend-native handle.

The frontend owns shape, dtype, device, view geometry (storage, offset, strides)
and autograd metadata; the backend owns memory. Op methods are attached by the
ops modules; this file holds what is about the object itself.
"""
from __future__ import annotations

import numpy as np

from . import _repr
from ._layout import CHANNELS_LAST_ORDER as _CHANNELS_LAST
from ._layout import contiguous_format as _contiguous_format
from ._layout import memory_format as _MemoryFormat
from ._layout import strided as _strided
from ._shape import Size, contiguous_strides, numel as _numel
from ._dtype import dtype as _dtype_class
from .autograd.grad_mode import STATE

_ENGINE_BACKWARD = None      # autograd.engine.backward, once imported (below)
_SAME = object()             # Tensor._grad_dt's default: grad_dtype is the tensor's dtype
_GRAD_DTYPE_HINT = ("The gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype). You can set the tensor's grad_dtype attribute with a specific dtype, "
                    "or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes "
                    "of a tensor and its gradient may break downstream systems that assume they "
                    "match.")


def _engine_backward():
    """autograd.engine.backward, imported on the first `Tensor.backward` (the engine
    imports this module) and kept: a `from ... import` in the method cost ~2 us a call,
    7% of a 10-element `(a * b).sum().backward()`."""
    global _ENGINE_BACKWARD
    from .autograd.engine import backward
    _ENGINE_BACKWARD = backward
    return backward


class Tensor:
    """A multi-dimensional array on a device, with optional gradient tracking."""

    # Class-level defaults: a fresh op output only sets what differs from these.
    _storage = None       # the storage handle for views; None: `_h` is its own storage
    _offset = 0           # element offset into the storage
    _stride = None        # element strides; None: C-contiguous
    _vcount = None        # [n], the version counter every view of a storage shares; on demand
    _rg = False           # requires grad
    _grad_fn = None
    _out_nr = 0
    _grad = None
    _grad_dt = _SAME      # grad_dtype once set (a dtype, or None: any); _SAME: the dtype
    _base = None          # the root tensor this is a view of
    _view_vc = None       # the version at which a view's grad_fn was made
    _hooks = None
    _post_acc_hooks = None    # [hook(tensor)] run once backward has accumulated .grad (leaves)
    _retains = False
    _inference = False    # made in inference mode (is_inference; views ask their base)
    __hash__ = object.__hash__
    __array_priority__ = 1000    # numpy defers `ndarray op tensor` to us

    def __init__(self, *args, **kwargs):
        # torch.Tensor(data) / torch.Tensor(*sizes): the legacy constructor.
        from . import ops
        if len(args) == 1 and not isinstance(args[0], int):
            src = ops.tensor(args[0], dtype=kwargs.get("dtype"), device=kwargs.get("device"))
            if not src.dtype.is_floating_point and kwargs.get("dtype") is None:
                src = src.float()
        else:
            src = ops.empty(*args, **kwargs)
        self.__dict__.update(src.__dict__)

    # -- identity and geometry --------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        from ._shape import norm_dim
        return self._shape[norm_dim(dim, len(self._shape), "size")]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._place.device

    @property
    def is_cuda(self):
        return self._place.type == "cuda"

    @property
    def is_cpu(self):
        return self._place.type == "cpu"

    @property
    def is_meta(self):
        return self._place.type == "meta"

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    ndimension = dim

    def numel(self):
        return _numel(self._shape)

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._dtype.itemsize * _numel(self._shape)

    def stride(self, dim=None):
        st = self._stride if self._stride is not None else contiguous_strides(self._shape)
        if dim is None:
            return st
        from ._shape import norm_dim
        return st[norm_dim(dim, len(self._shape), "stride")]

    def storage_offset(self):
        return self._offset

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format is not _contiguous_format:
            return self._is_contiguous_as(memory_format)
        st = self._stride
        if st is None or 0 in self._shape:      # c10's compute_contiguous: empty is contiguous
            return True
        expected = 1
        for n, s in zip(reversed(self._shape), reversed(st)):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def _is_contiguous_as(self, memory_format):
        """PyTorch's channels-last contiguity (c10's compute_channels_last_contiguous):
        the strides grow along C, W, H, N (C, W, H, D, N) over the dims of size > 1."""
        if not isinstance(memory_format, _MemoryFormat):
            raise TypeError(f"is_contiguous(): argument 'memory_format' must be "
                            f"torch.memory_format, not {type(memory_format).__name__}")
        order = _CHANNELS_LAST.get(memory_format)
        if order is None:                   # preserve_format: the default contiguity
            return self.is_contiguous()
        ndim, dims = order
        if len(self._shape) != ndim:
            return False
        st = self.stride()
        expected = 1
        for d in dims:
            if self._shape[d] != 1:
                if st[d] != expected:
                    return False
                expected *= self._shape[d]
        return True

    def _vc(self):
        """The version counter, shared with every view of the same storage."""
        v = self._vcount
        if v is None:
            v = self._vcount = [0]
        return v

    @property
    def _version(self):
        """PyTorch's version number (an int): in-place writes to this storage so far.
        Read-only, as PyTorch's; the shared counter itself is `_vcount`."""
        v = self._vcount
        return 0 if v is None else v[0]

    def _whole_storage(self):
        """The backend storage this tensor views: its own handle when it is not a view."""
        return self._storage if self._storage is not None else self._h

    def data_ptr(self):
        storage = self._whole_storage()
        return self._place.bk.data_ptr(storage) + self._offset * self._dtype.itemsize

    def share_memory_(self):
        """Move the storage into memory shared with other processes (cpu:
        torch.multiprocessing's Hogwild training), keeping this tensor's identity,
        geometry and autograd state: processes forked afterwards inherit it, and sent to
        any child (spawn, forkserver or fork; Process args, Queue, Pipe) it is rebuilt on
        the same memory. Other tensors already aliasing the old storage (views made
        before, `.data` results) keep the old memory. Other devices raise
        NotImplementedError naming the device."""
        bk = self._place.bk
        storage = self._whole_storage()
        if bk.is_shared(storage):
            return self
        shared = bk.share_memory(storage)
        base = self._base
        if self._storage is None:
            self._h = shared
        else:
            self._storage = shared
            self._h = bk.as_strided(shared, self._shape, self.stride(), self._offset)
            if base is not None and base._storage is None and base._h is storage:
                base._h = shared
        from ._shared_storage import share_with_children
        share_with_children(type(self), bk, shared)
        return self

    def is_shared(self):
        return self._place.bk.is_shared(self._whole_storage())

    def untyped_storage_id(self):
        return id(self._whole_storage())

    # -- autograd attributes ------------------------------------------------------
    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                                   "want to use a computed variable in a subgraph that doesn't require "
                                   "differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and not self._dtype.is_grad:
            raise RuntimeError(f"only Tensors of floating point and complex dtype can require gradients, "
                               f"got {self._dtype}")
        self._rg = bool(requires_grad)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(f"assigned grad has data of a different size: "
                                   f"{list(value._shape)} vs {list(self._shape)}")
            allowed = self._dtype if self._grad_dt is _SAME else self._grad_dt
            if allowed is not None and value._dtype is not allowed:
                raise RuntimeError(f"attempting to assign a gradient with dtype "
                                   f"'{value._dtype.cpp_name}' to a tensor with grad_dtype "
                                   f"'{allowed.pt_name}'. {_GRAD_DTYPE_HINT}")
            if value._place is not self._place:
                raise RuntimeError(f"assigned grad has data located on a different device: "
                                   f"{value.device} vs {self.device}")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_dtype(self):
        """The dtype backward casts this leaf's incoming gradients to, and the one an
        assigned .grad must have: the tensor's dtype unless set; None allows any."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self._dtype if self._grad_dt is _SAME else self._grad_dt

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype_class):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        g = self._grad
        if value is not None and g is not None and g._dtype is not value:
            raise RuntimeError(f"Cannot set grad_dtype to '{value.pt_name}' because there is "
                               f"already a gradient with dtype '{g._dtype.cpp_name}'. Please "
                               f"clear the gradient (.grad = None) before changing grad_dtype, "
                               f"or ensure the new grad_dtype matches the existing gradient's "
                               f"dtype.")
        self._grad_dt = value

    @property
    def grad_fn(self):
        if self._base is not None and self._grad_fn is not None:
            from ._run import refresh_view
            refresh_view(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def retains_grad(self):
        return self._retains

    def retain_grad(self):
        if self._grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains:
            return
        import weakref
        node = self._grad_fn
        if node.retains is None:
            node.retains = {}
        node.retains[self._out_nr] = weakref.ref(self)
        self._retains = True

    def register_hook(self, hook):
        """hook(grad) -> Tensor or None, run when this tensor's gradient is computed."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn.add_output_hook(self._out_nr, hook)
        from .autograd.graph import _Removable
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _Removable(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) -> None, run after backward has accumulated this leaf's .grad (so an
        optimizer step can run inside backward, parameter by parameter); it runs in no_grad
        unless create_graph, as in PyTorch."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        from .autograd.graph import _Removable
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return _Removable(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        run = _ENGINE_BACKWARD
        if run is None:
            run = _engine_backward()
        run(self, gradient, retain_graph, create_graph, inputs)

    def module_load(self, other, assign=False):
        """What load_state_dict swaps into this parameter or buffer under
        torch.__future__'s swap switch: a new object, never self or other (a subclass
        may override it to remap the state dict's value)."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    def detach(self):
        """A new tensor sharing this one's memory and version, outside the graph."""
        t = object.__new__(Tensor)
        d = t.__dict__
        d.update(self.__dict__)
        for k in ("_rg", "_grad_fn", "_out_nr", "_grad", "_grad_dt", "_base", "_view_vc",
                  "_hooks", "_post_acc_hooks", "_retains"):
            d.pop(k, None)
        d["_vcount"] = self._vc()
        return t

    def detach_(self):
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._rg = False
        self._out_nr = 0
        return self

    def is_inference(self):
        """Whether this tensor (or the tensor it is a view of) was made in inference mode."""
        base = self._base
        return (self if base is None else base)._inference

    @property
    def data(self):
        """The same memory outside the graph with a version counter of its own, as
        PyTorch's: in-place writes through `.data` (old optimizers, weight surgery) are
        invisible to autograd's saved-tensor check, where `detach()`'s are not."""
        t = self.detach()
        t.__dict__.pop("_vcount", None)
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(other).__name__}")
        for k in ("_h", "_shape", "_dtype", "_place", "_storage", "_offset", "_stride"):
            setattr(self, k, getattr(other, k))
        self._vcount = other._vc()

    # -- host conversion ---------------------------------------------------------------
    def _host(self):
        """The values as a numpy array (may alias memory on host backends)."""
        return self._place.bk.to_host(self._h)

    def numpy(self, *, force=False):
        if self._dtype.bare and self._dtype.is_floating_point:     # as PyTorch: numpy has no float8
            raise TypeError(f"Got unsupported ScalarType {self._dtype.pt_name}")
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._place.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self._place.device} device type tensor to numpy. "
                                f"Use Tensor.cpu() to copy the tensor to host memory first.")
            return np.array(self._host())
        return self._host()

    def tolist(self):
        a = self._host()
        if self._dtype.name == "bfloat16" or self._dtype.bare and self._dtype.is_floating_point:
            a = a.astype(np.float32)
        return a.tolist()

    def item(self):
        n = _numel(self._shape)
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        v = self._host().reshape(())
        dt = self._dtype
        return float(v) if dt.name == "bfloat16" or dt.bare and dt.is_floating_point else v.item()

    def __array__(self, dtype=None, copy=None):
        a = self.detach()._host() if self._place.type == "cpu" else np.array(self._host())
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        if self._place.type != "cpu":
            return self._place.bk.to_dlpack(self._h, *args, **kwargs)
        return self._host().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        if self._place.type != "cpu":
            return self._place.bk.dlpack_device(self._h)
        return self._host().__dlpack_device__()

    # -- Python protocol -----------------------------------------------------------------
    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __bool__(self):
        n = _numel(self._shape)
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'more than one value' if n else 'no values'} "
                               f"is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._dtype.is_floating_point or _numel(self._shape) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __repr__(self, *, tensor_contents=None):
        return _repr.tensor_repr(self, tensor_contents)

    def __format__(self, spec):
        """PyTorch's: a 0-dim tensor formats as its Python number (f"{loss}" is "0.25"),
        any other as object.__format__ does (str; a non-empty spec is a TypeError)."""
        if self.dim() == 0 and self._place.type != "meta":
            return self.item().__format__(spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with_grad = STATE.enabled
        STATE.enabled = False
        try:
            new = self.clone()
        finally:
            STATE.enabled = with_grad
        new.__class__ = self.__class__
        for k, v in self.__dict__.items():
            if not k.startswith("_") and k not in new.__dict__:
                import copy
                new.__dict__[k] = copy.deepcopy(v, memo)
        new._rg = self._rg
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    # the name of the function in dispatchtorch.serialization that unpickles this class;
    # nn.Parameter names its own, so nn.parameter need not import serialization (which
    # imports it: no cycle)
    _rebuilder = "_rebuild_tensor"

    def __reduce_ex__(self, protocol):
        from . import serialization
        return (getattr(serialization, self._rebuilder),
                (np.array(self.detach().cpu()._host()), str(self.device), self._rg))

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def output_nr(self):
        return self._out_nr

    # class attributes: dispatchtorch.sparse's COO class sets its own
    layout = _strided
    is_sparse = False

    @property
    def is_quantized(self):
        return False

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    def get_device(self):
        return -1 if self._place.type == "cpu" else self._place.index

