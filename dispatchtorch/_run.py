"""The executor: the one per-op path every op family runs through.

An op function (the family's frontend) normalises its arguments and makes a plan:
the compute dtype, the output (shape, dtype)s and the operand handles. `execute`
carries the plan out: resolve the kernel (or the decomposition), allocate the
outputs, launch, name the op in a backend error, wrap and record. `execute1` is the
one-output specialisation the elementwise and reduction hot paths call (same steps,
no tuple building); `launch` runs a kernel into existing memory (in-place ops).
Every kernel call goes through these three, and every kernel they call comes from
the op's kernel cache (`op.kernels`, filled by `dispatch.resolve`): that cache, the
backends' kernel tables and the memory methods are where the compile tracer
(_capture/tracer.py) swaps in its recorders, so tracing costs nothing when off.
Everything that can be decided once (kernel choice, promotion tables, which values
a derivative rule needs) was decided before the first call.
"""
from __future__ import annotations

from ._shape import contiguous_strides, expand_strides
from ._tensor import Tensor
from .autograd.grad_mode import INFERENCE_MADE, INFERENCE_REGIONS, STATE
from .autograd.graph import Node
from .dispatch import DECOMPOSE, OPS, kernel_error, resolve
from .dispatch.registry import IN, NEEDS, OUT, PARAM

_new = object.__new__


def wrap(h, shape, dt, place):
    """A fresh (contiguous, own storage) tensor around a handle."""
    t = _new(Tensor)
    t._h = h
    t._shape = shape
    t._dtype = dt
    t._place = place
    t._stride = None        # the class default, set: reading it is then an instance lookup
    if INFERENCE_REGIONS[0] and STATE.inference:
        mark_inference(t)
    return t


def mark_inference(t):
    """t was made in inference mode (Tensor.is_inference)."""
    t._inference = True
    INFERENCE_MADE[0] = True


def storage_of(t):
    s = t._storage
    return t._h if s is None else s


def strides_of(t):
    s = t._stride
    return contiguous_strides(t._shape) if s is None else s


def make_view(t, shape, stride, offset, h=None):
    """A tensor aliasing t's memory with the given geometry (no autograd); h: its
    handle, when the caller made it already (a numpy slice of t's)."""
    storage = t._storage
    if storage is None:
        storage = t._h
    place = t._place
    v = _new(Tensor)
    v._h = place.bk.as_strided(storage, shape, stride, offset) if h is None else h
    v._shape = shape
    v._dtype = t._dtype
    v._place = place
    v._stride = stride      # in wrap's attribute order (one shared key layout)
    v._storage = storage
    v._offset = offset
    vc = t._vcount
    if vc is None:
        vc = t._vcount = [0]
    v._vcount = vc
    v._base = t._base if t._base is not None else t
    if STATE.enabled:
        v._view_vc = vc[0]
    return v


def alloc(place, shape, dt):
    return place.empty(shape, dt.name, place.index)


def kernel_for(op, place):
    k = op.kernels.get(place.type)
    return resolve(op, place.rt) if k is None else k


def launch(op, k, place, args, kparams, dtypes, name=None):
    """Run kernel k into memory that exists (the outputs are among args); a backend's
    error is re-raised naming the op (`name`, e.g. 'add_', overrides op.name)."""
    try:
        if kparams:
            k(*args, **kparams)
        else:
            k(*args)
    except Exception as exc:
        raise kernel_error(name or op.name, place.type, dtypes, exc) from exc


def cast_handle(t, dt):
    """t's values as a fresh contiguous handle of dtype dt (same shape)."""
    place = t._place
    out = place.empty(t._shape, dt.name, place.index)
    place.bk.copy_(out, t._h)
    return out


def operand_handle(x, dt, shape, place):
    """A handle of x (tensor or Python scalar) with dtype dt, viewed as `shape`."""
    if isinstance(x, Tensor):
        if x._dtype is dt:
            if x._shape == shape:
                return x._h
            storage, st, off = storage_of(x), strides_of(x), x._offset
        else:
            storage = cast_handle(x, dt)
            if x._shape == shape:
                return storage
            st, off = contiguous_strides(x._shape), 0
        return place.bk.as_strided(storage, shape, expand_strides(x._shape, st, shape), off)
    if not shape:
        return scalar_handle(x, dt, place)
    key = (x, type(x), dt, place, shape)
    h = _expanded_cache.get(key)
    if h is None:
        h = place.bk.as_strided(scalar_handle(x, dt, place), shape, (0,) * len(shape), 0)
        if (type(x) is not float or (x != 0.0 and x == x)) and len(_expanded_cache) < 4096:
            _expanded_cache[key] = h
    return h


_scalar_cache: dict = {}
_expanded_cache: dict = {}     # (value, type, dtype, place, shape) -> a broadcast view


def scalar_handle(value, dt, place):
    """A 0-d handle holding a Python scalar; small constants are cached (kernels never
    write their inputs, so sharing them is safe)."""
    key = None
    if type(value) is not float or (value != 0.0 and value == value):
        key = (value, type(value), dt, place)
        h = _scalar_cache.get(key)
        if h is not None:
            return h
    import numpy as np
    if type(value) is float and dt.category < 2 and value == value and abs(value) != float("inf"):
        value = int(value)       # C cast, as PyTorch casts a float scalar into an int op
    try:
        host = np.asarray(value).astype(dt.np)
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow") from None
    h = place.bk.from_host(host.reshape(()), place.index)
    if key is not None and len(_scalar_cache) < 4096:
        _scalar_cache[key] = h
    return h


# -- autograd recording ---------------------------------------------------------------

def edge_of(x):
    fn = x._grad_fn
    return (fn, x._out_nr) if fn is not None else (x, 0)


def record(op, inputs, params, outs):
    """Attach a Node running op's derivative rule to the floating outputs."""
    edges = []
    meta = []
    for x in inputs:
        if isinstance(x, Tensor):
            if x._view_vc is not None and x._base is not None and x._vcount[0] != x._view_vc:
                refresh_view(x)
            if x._rg:
                fn = x._grad_fn
                edges.append((fn, x._out_nr) if fn is not None else (x, 0))
                meta.append((x._shape, x._dtype))
                continue
        edges.append(None)
        meta.append(None)
    getters = op.getters
    if getters:
        saved, versions, outsaved = _save(op, getters, inputs, params, outs, edges)
    else:
        saved = versions = outsaved = ()
    node = Node(op.name, op.grad, saved, versions, tuple(edges), tuple(meta), len(outs))
    if outsaved:
        node.outsaved = outsaved
    for i, o in enumerate(outs):
        if o._dtype.is_grad:
            o._grad_fn = node
            o._out_nr = i
            o._rg = True
    return node


def _save(op, getters, inputs, params, outs, edges):
    """The values op's derivative rule named, with the versions of the tensors among them."""
    saved = []
    versions = []
    outsaved = []
    for (kind, key), mask in zip(getters, op.save_masks):
        if kind == IN:
            v = inputs[key]
            if mask is not None:
                for j in mask:
                    if edges[j] is not None:
                        break
                else:
                    v = None
        elif kind == PARAM:
            v = params[key]
        elif kind == OUT:
            if key >= len(outs):    # a row whose one form returns fewer (max(x) / max(x, dim))
                saved.append(None)
                continue
            v = outs[key].detach()
            outsaved.append((len(saved), key))
        else:
            v = tuple([e is not None for e in edges])
        if isinstance(v, Tensor):
            if INFERENCE_MADE[0] and v.is_inference() and not STATE.inference:
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. Please do not use Tensors "
                    "created in inference mode in computation tracked by autograd. To work "
                    "around this, you can make a clone to get a normal tensor and use it in "
                    "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
            vc = v._vcount
            if vc is None:
                vc = v._vcount = [0]
            versions.append((len(saved), vc[0]))
        saved.append(v)
    return tuple(saved), tuple(versions), tuple(outsaved)


def any_requires_grad(inputs):
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def refresh_view(v):
    """Give a view a fresh grad_fn after its base's history changed in place."""
    base = v._base
    if v._view_vc is None or v._vcount[0] == v._view_vc or not base._rg:
        return
    v._view_vc = v._vcount[0]
    record_view(base, v)


def record_view(base, v):
    """Record v as an as_strided view of base (a root tensor, so contiguous)."""
    params = {"size": v._shape, "stride": strides_of(v), "storage_offset": v._offset,
              "input_shape": base._shape}
    v._grad_fn = None
    v._rg = False
    record(OPS["as_strided"], (base,), params, (v,))


# -- the generic op executor ---------------------------------------------------------

def execute1(op, k, place, shape, dt, args, kdtypes, kparams=None, inputs=None, params=None):
    """One output of (shape, dt): allocate, run k(out, *args, **kparams), wrap, and (when
    the caller passes `inputs`: it is tracking) record a floating output. kdtypes name
    the dtypes in a backend's error."""
    try:        # allocation inside: out of device memory names the op
        out = place.empty(shape, dt.name, place.index)
        if kparams:
            k(out, *args, **kparams)
        else:
            k(out, *args)
    except Exception as exc:
        raise kernel_error(op.name, place.type, kdtypes, exc) from exc
    r = wrap(out, shape, dt, place)
    if inputs is not None and dt.is_grad:
        record(op, inputs, params or _NOPARAMS, (r,))
    return r


_NOPARAMS: dict = {}


def execute(op, place, inputs, handles, outs_meta, kparams=None, params=None):
    """Carry out a plan: resolve op's kernel (or run its decomposition), allocate the
    outputs, launch, wrap and record.

    inputs: the op's operands in op.args order (tensors or scalars), for autograd
    and decomposition; handles: what the kernel receives after the outputs;
    outs_meta: ((shape, dtype), ...); kparams: keyword parameters of the kernel;
    params: what the derivative rule and decomposition get (defaults to kparams).
    """
    if params is None:
        params = kparams or _NOPARAMS
    k = kernel_for(op, place)
    track = STATE.enabled and op.differentiable and any_requires_grad(inputs)
    if k is DECOMPOSE or (track and op.grad is None):
        # a composite's own kernel is opaque to autograd: without a derivative rule
        # of its own, differentiate through the decomposition
        return decompose(op, inputs, params)
    if len(outs_meta) == 1:                     # most ops: no lists or generators
        (shape, dt), = outs_meta
        return execute1(op, k, place, shape, dt, handles, (dt,), kparams,
                        inputs if track else None, params)
    dtypes = [d for _, d in outs_meta]
    try:
        outs = [place.empty(shape, dt.name, place.index) for shape, dt in outs_meta]
    except Exception as exc:
        raise kernel_error(op.name, place.type, dtypes, exc) from exc
    launch(op, k, place, (*outs, *handles), kparams, dtypes)
    results = tuple(wrap(h, shape, dt, place) for h, (shape, dt) in zip(outs, outs_meta))
    if track:
        record(op, inputs, params, results)
    return results


apply = execute      # the name the op modules call it by


def decompose(op, inputs, params):
    """Run op's decomposition; with a derivative rule of its own, record one node
    instead of the decomposition's many."""
    if op.grad is not None and STATE.enabled and any_requires_grad(inputs):
        STATE.enabled = False
        try:
            r = op.decomp(*inputs, **params)
        finally:
            STATE.enabled = True
        outs = r if isinstance(r, tuple) else (r,)
        record(op, inputs, params, outs)
        return r
    return op.decomp(*inputs, **params)


def same_place(op_name, tensors):
    """The common place of tensors; 0-d cpu tensors follow the others (as in PyTorch)."""
    place = first = None
    for t in tensors:
        if not isinstance(t, Tensor):
            continue
        p = t._place
        if place is None:
            place, first = p, t
        elif p is not place:
            if _cpu_scalar(t):
                continue
            if _cpu_scalar(first):
                place, first = p, t
                continue
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {first.device} and {t.device}! "
                               f"(when checking arguments for {op_name})")
    return place


def _cpu_scalar(t):
    return t._place.type == "cpu" and not t._shape


def to_place(t, place):
    """t on place (used for 0-d cpu tensors joining an op on another device)."""
    if t._place is place:
        return t
    return to_device(t, place)


def to_device(input, place):
    """input's values on another place, through the host (`Tensor.to(device)`'s core)."""
    src = input._place
    host = src.bk.to_host(input._h)
    if host.dtype != input._dtype.np:
        raise RuntimeError(f"backend '{src.type}' returned host data of dtype {host.dtype} for a "
                           f"{input._dtype.name} tensor")
    import numpy as np
    host = np.asarray(host, order="C")
    place.check_dtype(input._dtype, "to")
    r = wrap(place.bk.from_host(host, place.index), input._shape, input._dtype, place)
    if STATE.enabled and input._rg:
        record(OPS["to_device"], (input,), {}, (r,))
    return r
