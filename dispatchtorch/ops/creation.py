"""Factories: tensors made from Python data, numpy arrays, constants and ranges.

Values are produced on the host (numpy) and sent to the device once; constants use
the backend's fill_.
"""
from __future__ import annotations

import math
import numbers
from collections import abc as _abc
import operator
import warnings

import numpy as np

from .._layout import require_strided as _require_strided
from .._output_strides import format_strides
from .._result_layout import made_in_layout
from .. import _dtype as D
from .._place import place_of
from .._run import wrap
from .._shape import as_shape
from .._tensor import Tensor
from ._out import takes_out
from ._bare_support import check_op as bare_check

_default_device = [None]


def set_default_device(device):
    """Where factories put tensors when no device is given (None: the cpu)."""
    _default_device[0] = device


def get_default_device():
    from .._device import device as Device
    return Device(_default_device[0] or "cpu")


def _place(device):
    return place_of(_default_device[0] if device is None else device)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _from_host(arr, dt, device, requires_grad=False, op="tensor"):
    place = _place(device)
    place.check_dtype(dt, op)
    if dt.bare and dt.is_floating_point and np.asarray(arr).dtype != dt.np:
        # float8 from other values: the backend rounds them (c10's way)
        f32 = np.asarray(arr, dtype=np.float32, order="C")
        h = place.empty(f32.shape, dt.name, place.index)
        place.bk.copy_(h, place.bk.from_host(f32, place.index))
        return _finish(wrap(h, f32.shape, dt, place), requires_grad)
    arr = np.asarray(arr, dtype=dt.np, order="C")
    return _finish(wrap(place.bk.from_host(arr, place.index), arr.shape, dt, place), requires_grad)


def _infer(data):
    """A numpy array of Python data and the dtype PyTorch would give it."""
    if isinstance(data, np.ndarray):
        return data, D.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), D.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return np.asarray(data), D.bool_
    if isinstance(data, numbers.Integral):
        return np.asarray(data, dtype=np.int64), D.int64
    if isinstance(data, numbers.Real):
        return np.asarray(data, dtype=np.float64), D.get_default_dtype()
    if isinstance(data, numbers.Complex):
        return np.asarray(data, dtype=np.complex128), D.default_complex_dtype()
    if isinstance(data, Tensor):
        return np.asarray(data.detach()._host()), data.dtype
    if _is_other_sequence(data):              # deque, range ...: PyTorch takes any sequence
        data = list(data)
    if isinstance(data, (list, tuple)):
        flat = _plain(data)
        try:
            arr = np.array(flat)
        except ValueError as exc:
            raise ValueError(f"tensor(): data has an irregular shape (a nested sequence whose "
                             f"lengths differ): {exc}") from None
        if arr.dtype == object:
            raise TypeError(f"tensor(): could not infer dtype of {type(data).__name__} elements")
        kind = arr.dtype.kind
        if arr.size == 0 or kind == "f":
            return arr, D.get_default_dtype() if not _has_tensor_dtype(data) else _tensor_dtype(data)
        if kind == "b":
            return arr, D.bool_
        if kind in "iu":
            return arr, D.int64 if not _has_tensor_dtype(data) else _tensor_dtype(data)
        if kind == "c":
            return arr, (D.default_complex_dtype() if not _has_tensor_dtype(data) else
                         _tensor_dtype(data).to_complex())
        raise TypeError(f"tensor(): could not infer dtype of elements of type {arr.dtype}")
    if hasattr(data, "__array__") or hasattr(data, "__dlpack__"):
        return _infer(np.asarray(data))
    raise TypeError(f"tensor(): could not convert data of type {type(data).__name__}")


def _plain(data):
    if isinstance(data, Tensor):
        if data.numel() == 1 and data.dim() == 0:
            return data.item()
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    if type(data) in _SCALARS:              # the common leaf: no ABC check
        return data
    return [_plain(x) for x in data] if _is_other_sequence(data) else data


_SCALARS = (float, int, bool, complex)


def _is_other_sequence(data):
    return isinstance(data, _abc.Sequence) and \
        not isinstance(data, (list, tuple, str, bytes, bytearray))


def _tensors_in(data):
    for x in data:
        if isinstance(x, Tensor):
            yield x
        elif isinstance(x, (list, tuple)):
            yield from _tensors_in(x)


def _has_tensor_dtype(data):
    return next(_tensors_in(data), None) is not None


def _tensor_dtype(data):
    dt = None
    for t in _tensors_in(data):
        dt = t.dtype if dt is None else dt._promote[t.dtype]
    return dt


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() rather than tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        r = data.detach().clone()
        r = r.to(device=device if device is not None else r.device,
                 dtype=dtype if dtype is not None else r.dtype)
        return _finish(r, requires_grad)
    arr, dt = _infer(data)
    if dtype is not None:
        dt = D.to_dtype(dtype)
    if not isinstance(data, (np.ndarray, np.generic)):
        _check_fits(arr, dt)
    return _from_host(_cast_host(arr, dt), dt, device, requires_grad)


def _check_fits(arr, dt):
    """Python numbers must fit an integer dtype (PyTorch's checked conversion; numpy
    arrays wrap, as in PyTorch). Unsigned types take negative integers down to -max
    (two's complement); floats must lie in [min, max] and not be NaN."""
    if dt.category != D.INT or not arr.size or arr.dtype.kind not in "iuf":
        return
    info = D.iinfo(dt)
    if dt is D.uint64:                  # PyTorch's parser reads an unsigned long long
        if arr.dtype.kind == "f":
            raise TypeError("an integer is required")
        if int(arr.min()) < 0:
            raise OverflowError("can't convert negative int to unsigned")
        return
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = not np.isnan(arr).any() and info.min <= arr.min() and arr.max() <= info.max
    else:
        lo, hi = int(arr.min()), int(arr.max())
        if hi > 2 ** 63 - 1:        # PyTorch's parser: a Python int past int64
            raise ValueError("tensor(): Overflow when unpacking long long")
        ok = hi <= info.max and lo >= (info.min if dt.is_signed else -info.max)
    if not ok:
        raise RuntimeError(f"tensor(): value cannot be converted to type {dt.name} without "
                           f"overflow")


def _cast_host(arr, dt):
    if arr.dtype == dt.np:
        return arr
    if dt.bare and dt.is_floating_point:     # float8: float32 here, the backend rounds
        dt = D.float32
    with np.errstate(all="ignore"):
        return arr.astype(dt.np)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device,
                       dtype=dtype if dtype is not None else data.dtype)
    if isinstance(data, np.ndarray) and (device is None or str(device) == "cpu") and \
            _default_device[0] is None and (dtype is None or D.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A cpu tensor sharing memory with a C-contiguous, writable numpy array. Others
    (non-contiguous, read-only) are copied, where PyTorch would share them: the CPU
    backend's handles are contiguous numpy arrays or views of one."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array with array.copy().)")
    dt = D.from_numpy_dtype(ndarray.dtype)
    arr = ndarray if ndarray.dtype.isnative else ndarray.astype(ndarray.dtype.newbyteorder("="))
    place = place_of("cpu")
    t = wrap(place.bk.from_host(arr, 0, copy=False), arr.shape, dt, place)
    t._resizable = False        # numpy's memory: resize_ may not grow it (as in PyTorch)
    return t


def from_dlpack(ext_tensor):
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    dev = getattr(ext_tensor, "__dlpack_device__", None)
    if dev is not None and dev()[0] != 1:      # not kDLCPU: let a backend adopt it
        from ..dispatch import list_backends
        for rt in list_backends():
            if rt.status == "ready":
                result = rt.backend.from_dlpack(ext_tensor)
                if result is not None:
                    h, shape, dtype_name, index = result
                    place = place_of(f"{rt.name}:{index}")
                    t = wrap(h, tuple(shape), D.BY_NAME[dtype_name], place)
                    t._resizable = False    # the producer's memory, as from_numpy's
                    return t
        raise RuntimeError(f"from_dlpack: no installed backend accepts DLPack device {dev()}")
    return from_numpy(np.from_dlpack(ext_tensor))


def _dtype_or(dtype, default):
    return D.to_dtype(dtype) if dtype is not None else default


@takes_out("empty", "cast", factory=True)
def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          pin_memory=False, memory_format=None):
    _require_strided(layout, "empty")
    shape = as_shape(size_arg(sizes, size, "empty"), "empty")
    _check_sizes(shape, "empty")
    dt = _dtype_or(dtype, D.get_default_dtype())
    place = _place(device)
    place.check_dtype(dt, "empty")
    return _finish(wrap(place.empty(shape, dt.name, place.index), shape, dt, place), requires_grad)


def size_arg(sizes, size, op):
    """The size given as f(2, 3), f((2, 3)) or f(size=(2, 3)), as PyTorch's factories."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{op}() received an invalid combination of arguments - got the size "
                        "both positionally and as size=")
    return (size,)


def _check_sizes(shape, op):
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{op}: Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")


@takes_out("full", "cast", factory=True)
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False):
    _require_strided(layout, "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = D.bool_ if isinstance(fill_value, bool) else \
            D.int64 if isinstance(fill_value, numbers.Integral) else \
            D.get_default_dtype() if isinstance(fill_value, numbers.Real) else \
            D.default_complex_dtype()
    t = empty(as_shape((size,), "full"), dtype=dtype, device=device)
    t._place.bk.fill_(t._h, _fill(fill_value, t.dtype))
    return _finish(t, requires_grad)


def _fill(value, dt):
    if dt is D.bool_:
        return bool(value)
    if dt.is_complex:
        return complex(value)
    return float(value) if dt.is_floating_point else int(value)


@takes_out("zeros", "cast", factory=True)
def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          pin_memory=False):
    _require_strided(layout, "zeros")
    return full(as_shape(size_arg(sizes, size, "zeros"), "zeros"), 0, dtype=_dtype_or(dtype, D.get_default_dtype()),
                device=device, requires_grad=requires_grad)


@takes_out("ones", "cast", factory=True)
def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
         pin_memory=False):
    _require_strided(layout, "ones")
    return full(as_shape(size_arg(sizes, size, "ones"), "ones"), 1, dtype=_dtype_or(dtype, D.get_default_dtype()),
                device=device, requires_grad=requires_grad)


def _like(input, dtype, device):
    return (_dtype_or(dtype, input.dtype), input.device if device is None else device)


def made_like(op, input, memory_format, make, requires_grad):
    """make(shape) (a factory call) laid out as PyTorch lays a `*_like` result out:
    preserve_format (the default) keeps a dense input's strides; the result is a leaf."""
    st = format_strides(op, input._shape, input._stride, memory_format)
    if st is None:
        return _finish(make(input._shape), requires_grad)
    return _finish(made_in_layout(make, input._shape, st), requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None):
    _require_strided(layout, "empty_like")
    dt, dev = _like(input, dtype, device)
    return made_like("empty_like", input, memory_format,
                     lambda shape: empty(shape, dtype=dt, device=dev), requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None):
    _require_strided(layout, "zeros_like")
    dt, dev = _like(input, dtype, device)
    return made_like("zeros_like", input, memory_format,
                     lambda shape: full(shape, 0, dtype=dt, device=dev), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None):
    _require_strided(layout, "ones_like")
    dt, dev = _like(input, dtype, device)
    return made_like("ones_like", input, memory_format,
                     lambda shape: full(shape, 1, dtype=dt, device=dev), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None):
    _require_strided(layout, "full_like")
    dt, dev = _like(input, dtype, device)
    return made_like("full_like", input, memory_format,
                     lambda shape: full(shape, fill_value, dtype=dt, device=dev), requires_grad)


def _number(x, name):
    if isinstance(x, Tensor):
        return x.item()
    if not isinstance(x, numbers.Real):
        raise TypeError(f"arange(): argument '{name}' must be a number, got {type(x).__name__}")
    return x


@takes_out("arange", "cast", factory=True)
def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None,
           layout=None, pin_memory=False):
    _require_strided(layout, "arange")
    if end is None:
        start, end = 0, start
    start, end, step = _number(start, "start"), _number(end, "end"), _number(step, "step")
    if dtype is None:
        floating = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dt = D.get_default_dtype() if floating else D.int64
    else:
        dt = D.to_dtype(dtype)
    if dt.bare:
        bare_check("arange", dt)
    if not dt.is_floating_point and dtype is not None and dt is D.int64:
        # PyTorch reads every bound as int64 first when asked for int64
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = math.ceil((end - start) / step)
    # computed as PyTorch's CPU kernel does: start + i * step in double, or in integers
    # (bounds truncated) for an integer dtype
    if dt.is_floating_point:
        values = start + np.arange(size, dtype=np.float64) * step
    else:
        values = int(start) + np.arange(size, dtype=np.int64) * int(step)
    return _from_host(_cast_host(values, dt), dt, device, requires_grad, "arange")


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated; use arange (which excludes end)", UserWarning,
                  stacklevel=2)
    dt = _dtype_or(dtype, D.get_default_dtype())
    n = int(math.floor((end - start) / step)) + 1
    return _from_host((start + np.arange(n) * step).astype(dt.np), dt, device, requires_grad)


@takes_out("linspace", "cast", factory=True)
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None,
             layout=None):
    _require_strided(layout, "linspace")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    cplx = isinstance(start, complex) or isinstance(end, complex)
    if not cplx:
        start, end = _number(start, "start"), _number(end, "end")
    dt = _dtype_or(dtype, D.default_complex_dtype() if cplx else D.get_default_dtype())
    if dt.bare:
        bare_check("linspace", dt)
    values = np.empty(steps, dtype=np.complex128 if cplx or dt.is_complex else np.float64)
    if steps == 1:
        values[:] = start
    elif steps > 1:
        step = (end - start) / (steps - 1)
        half = steps // 2
        i = np.arange(steps, dtype=np.float64)
        # symmetric from both ends, as PyTorch computes it
        values[:half] = start + step * i[:half]
        values[half:] = end - step * (steps - 1 - i[half:])
    if not dt.is_grad:
        values = np.trunc(values) if dt is not D.bool_ else values
    return _from_host(_cast_host(values, dt), dt, device, requires_grad, "linspace")


@takes_out("logspace", "cast", factory=True)
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    dt = _dtype_or(dtype, D.get_default_dtype())
    if dt.bare:
        bare_check("logspace", dt)
    exps = linspace(start, end, steps, dtype=D.float64)._host()
    return _from_host(_cast_host(np.power(base, exps), dt), dt, device, requires_grad, "logspace")


@takes_out("eye", "cast", factory=True)
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    _require_strided(layout, "eye")
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n and m must be non-negative, got {n}, {m}")
    dt = _dtype_or(dtype, D.get_default_dtype())
    if dt.bare:
        bare_check("eye", dt)
    return _from_host(np.eye(n, n if m is None else m, dtype=dt.np), dt, device, requires_grad, "eye")


# -- random ------------------------------------------------------------------------------------

def _triangle_indices(row, col, offset, lower, dtype, device):
    if row < 0 or col < 0:
        raise RuntimeError(f"row and col must be non-negative, got row={row}, col={col}")
    dt = _dtype_or(dtype, D.int64)
    if dt not in (D.int64, D.int32):
        raise RuntimeError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented for "
                           f"'{dt.pt_name}'")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return _from_host(np.stack([r[keep], c[keep]]).astype(dt.np), dt, device, False,
                      "tril_indices" if lower else "triu_indices")


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix, row-major."""
    _require_strided(layout, "tril_indices")
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix, row-major."""
    _require_strided(layout, "triu_indices")
    return _triangle_indices(row, col, offset, False, dtype, device)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids (views that broadcast each 1-d input along the other dims)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid(): expected Tensors, got {type(t).__name__}")
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t.dim()}D")
    if not tensors:
        return ()
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: expects all tensors to have the same dtype")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# -- schema rows of the factories (the table documents them; they run on the host and
# reach the device through from_host / fill_, so they need no kernel) ---------------------------

def _factory_rows():
    from ..dispatch.registry import frontend_row
    rows = {
        "empty": "empty(*size, dtype=None, device=None): uninitialised memory",
        "full": "full(size, fill_value, dtype=None, device=None): the dtype follows fill_value",
        "zeros": "zeros(*size, dtype=None, device=None)", "ones": "ones(*size, dtype=None, device=None)",
        "arange": "arange(start=0, end, step=1): start + i * step in double (or int64), "
                  "ceil((end - start) / step) elements",
        "linspace": "linspace(start, end, steps): symmetric from both ends as PyTorch",
        "logspace": "logspace(start, end, steps, base=10.0): base ** linspace in double",
        "eye": "eye(n, m=None)", "tril_indices": "tril_indices(row, col, offset=0): (2, N) int64",
        "triu_indices": "triu_indices(row, col, offset=0): (2, N) int64",
        "rand": "rand(*size): uniform [0, 1) from the Generator (numpy PCG64)",
        "randn": "randn(*size): standard normal", "randint": "randint(low=0, high, size)",
        "randperm": "randperm(n)", "normal": "normal(mean, std, size=None): tensor or float "
                                              "mean and std",
        "bernoulli": "bernoulli(p): 0/1 with probability p, p's dtype",
        "multinomial": "multinomial(probs, num_samples, replacement=False)",
        "uniform_": "Tensor.uniform_(a=0, b=1): fill in place", "normal_": "Tensor.normal_(mean=0, "
                                                                         "std=1): fill in place",
    }
    for name, sig in rows.items():
        frontend_row(name, kind="factory", differentiable=False, signature=sig.split(":")[0],
                     doc=sig.split(":", 1)[1].strip() if ":" in sig else "")


_factory_rows()

from ._composite import composite as _composite  # noqa: E402

MESHGRID = _composite("meshgrid", lambda *tensors, indexing: meshgrid(*tensors, indexing=indexing),
                      kind="view", args=("tensors",),
                      signature="meshgrid(*tensors, indexing='ij')",
                      doc="broadcast views of 0-d / 1-d tensors ('xy' swaps the first two)")
