"""Clones, dtype casts and device transfers: the memory ops that need no other op.

Apart from memory.py (which re-exports them) because they sit below everything: views
reshape through a clone and the elementwise executors cast, while memory's cat, stack and
copy_ are built from views (see the ops/ layers in pyproject.toml)."""
from __future__ import annotations

from .. import _dtype as D
from .._device import device as Device
from .._layout import preserve_format
from .._output_strides import preserve_strides
from .._place import place_of
from .._result_layout import run_in_layout
from .._run import record, to_device, wrap
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch.registry import frontend_row

CLONE = frontend_row("clone", kind="memory", grad=lambda g: g,
                     signature="clone(x)", doc="a copy in fresh memory (a dense input's strides)")
CAST = frontend_row("to_dtype", kind="memory", grad=lambda g, x: g.to(x.dtype),
                    signature="to(x, dtype)", doc="convert elements (C casts)")
TRANSFER = frontend_row("to_device", kind="memory", grad=lambda g, x: g.to(x.device),
                        signature="to(x, device)", doc="copy to another device (via the host)")

def kept_strides(input, memory_format=None):
    """The strides preserve_format (None, the default) gives a copy of input: a dense
    input's own, else dense in its dims' order; None for C-contiguous (PyTorch's
    empty_like rule). Any other memory_format here means contiguous."""
    st = input._stride
    if st is None or memory_format is not None and memory_format is not preserve_format:
        return None
    return preserve_strides(input._shape, st)


def clone(input, *, memory_format=None):
    """A copy; preserve_format (the default) keeps a dense input's strides, any other
    memory_format reaching here (contiguous_format) gives C-contiguous memory."""
    st = kept_strides(input, memory_format)
    if st is not None:
        return run_in_layout(lambda v: clone(v, memory_format="contiguous"), (input,),
                             input._shape, st)
    place = input._place
    out = place.empty(input._shape, input._dtype.name, place.index)
    place.bk.copy_(out, input._h)
    r = wrap(out, input._shape, input._dtype, place)
    if STATE.enabled and input._rg:
        record(CLONE, (input,), {}, (r,))
    return r


def contiguous(input, memory_format=None):
    return input if input.is_contiguous() else clone(input, memory_format="contiguous")


def _cast(input, dt):
    """input converted to dt, laid out as clone's preserve_format lays a copy out."""
    st = kept_strides(input)
    if st is not None:
        return run_in_layout(lambda v: _cast_contiguous(v, dt), (input,), input._shape, st)
    return _cast_contiguous(input, dt)


def _cast_contiguous(input, dt):
    place = input._place
    place.check_dtype(dt, "to")
    out = place.empty(input._shape, dt.name, place.index)
    place.bk.copy_(out, input._h)
    r = wrap(out, input._shape, dt, place)
    if STATE.enabled and input._rg and dt.is_grad:
        record(CAST, (input,), {}, (r,))
    return r


def _parse_to(args, kwargs):
    """PyTorch's forms: to(dtype, non_blocking, copy), to(device, dtype, non_blocking,
    copy), to(other, non_blocking, copy), each with keyword memory_format (memory.to lays
    the result out by it)."""
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    flags = []                                  # positional non_blocking, copy
    for a in args:
        if isinstance(a, bool) and len(flags) < 2:
            flags.append(a)
        elif flags:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dt = a
        elif isinstance(a, (str, Device)) or isinstance(a, int) and not isinstance(a, bool):
            dev = a if not isinstance(a, int) else Device("cuda", a)
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    copy = kwargs.pop("copy", flags[1] if len(flags) > 1 else False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    return dev, (D.to_dtype(dt) if dt is not None else None), copy


def to(input, *args, **kwargs):
    dev, dt, copy = _parse_to(args, dict(kwargs))
    r = input
    if dev is not None:
        place = place_of(dev)
        if place is not input._place:
            r = to_device(r, place)
    if dt is not None and dt is not r._dtype:
        r = _cast(r, dt)
    if copy and r is input:
        r = clone(input)
    return r


def _to_dtype(dt):
    def convert(self, memory_format=None):
        return self if self._dtype is dt else _cast(self, dt)
    convert.__name__ = dt.name
    return convert


def type_(input, dtype=None, non_blocking=False):
    """x.type(): PyTorch's legacy type name (`torch.FloatTensor`, `torch.cuda.LongTensor`):
    programs compare it with those strings."""
    if dtype is None:
        where = "" if input._place.type == "cpu" else f"{input._place.type}."
        return f"torch.{where}{input._dtype.pt_name}Tensor"
    return to(input, dtype=dtype)


def cpu(input, memory_format=None):
    return to(input, "cpu")


def cuda(input, device=None, non_blocking=False, memory_format=None):
    return to(input, "cuda" if device is None else
              (Device("cuda", device) if isinstance(device, int) else device))
