"""torch.masked's reductions and normalizations on strided tensors: the masked-out
elements are replaced by the operation's identity (0 for sum, -inf for amax, ...) and
the ordinary op runs, as PyTorch's torch/masked/_ops.py does. Written in public ops, so
autograd and every backend come with them. Sparse layouts and MaskedTensor are absent."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import ops as torch
from .._tensor import Tensor
from ..ops.norms import vector_norm

_INT_TO_LONG = (D.uint8, D.bool_, D.int8, D.int16, D.int32)


def _strided(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"masked {op}: argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def _canonical_dim(dim, ndim):
    """dim as a sorted tuple of non-negative dims (None or () is every dim)."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(x, mask):
    """mask broadcast to x's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(x.shape):
        if mask.dim() > x.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = torch.broadcast_to(mask, tuple(x.shape))
    return mask.to(D.bool_)


def _identity(op, x, ord=None):
    """The value that leaves the reduction unchanged, as a 0-d tensor of x's dtype."""
    dt = x.dtype
    if op in ("sum", "cumsum"):
        v = 0
    elif op in ("prod", "cumprod"):
        v = 1
    elif op == "logsumexp" and dt.is_complex:
        v = complex(-math.inf, 0.0)
    elif op in ("amax", "argmax", "logaddexp", "logsumexp"):
        v = -math.inf if dt.is_floating_point else D.iinfo(dt).min
    elif op in ("amin", "argmin"):
        v = math.inf if dt.is_floating_point else D.iinfo(dt).max
    elif op == "norm":
        v = math.inf if ord == -math.inf else 0
    elif op == "median":
        return torch.tensor(math.nan, dtype=dt if dt.is_floating_point else D.float32,
                            device=x.device)
    else:
        raise NotImplementedError(f"identity of {op} on {dt} input")
    return torch.tensor(v, dtype=dt, device=x.device)


def _combine(op, x, mask, ord=None):
    """x with its masked-out elements set to op's identity."""
    if mask is None:
        return x
    return torch.where(_input_mask(x, mask), x, _identity(op, x, ord))


def _sum_dtype(x, dtype):
    return dtype if dtype is not None else D.int64 if x.dtype in _INT_TO_LONG else x.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "sum")
    dtype = _sum_dtype(input, dtype)
    return torch.sum(_combine("sum", input, mask), _canonical_dim(dim, input.dim()),
                     bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "prod")
    r = _combine("prod", input, mask).to(_sum_dtype(input, dtype))
    for d in reversed(_canonical_dim(dim, input.dim())):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    _strided(input, "cumsum")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return torch.cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    _strided(input, "cumprod")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return torch.cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype)


def _extreme(fn, op, input, dim, keepdim, dtype, mask):
    _strided(input, op)
    dtype = input.dtype if dtype is None else dtype
    m = _combine(op, input, mask)
    return fn(m, _canonical_dim(dim, m.dim()), bool(keepdim)).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _extreme(torch.amax, "amax", input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _extreme(torch.amin, "amin", input, dim, keepdim, dtype, mask)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "argmax")
    dtype = input.dtype if dtype is None else dtype
    return torch.argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "argmin")
    dtype = input.dtype if dtype is None else dtype
    return torch.argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def _floating(dtype, given, op):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"{op}(): Could not infer output dtype. {given} dtype must be either a "
                         f"floating point or complex dtype. Got: {dtype}")


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "mean")
    given = "Optional" if dtype is not None else "Input"
    dtype = input.dtype if dtype is None else dtype
    _floating(dtype, given, "mean")
    if mask is None:
        count = sum(torch.ones(tuple(input.shape), dtype=D.int64, device=input.device), dim,
                    keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=_canonical_dim(dim, input.dim()), keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "median")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(D.float32)
    out = torch.nanmedian(_combine("median", x, mask), d, keepdim).values
    if is_float:
        return out
    if bool(torch.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "logsumexp")
    dtype = input.dtype if dtype is None else dtype
    return torch.logsumexp(_combine("logsumexp", input, mask), _canonical_dim(dim, input.dim()),
                           keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    _strided(input, "logaddexp")
    _strided(other, "logaddexp")
    dtype = input.dtype if dtype is None else dtype
    return torch.logaddexp(_combine("logaddexp", input, input_mask),
                           _combine("logaddexp", other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "norm")
    dtype = input.dtype if dtype is None else dtype
    x = _combine("norm", input, mask, ord)
    if dtype.is_complex and x.dtype.is_complex:    # the norm of the moduli: a real result
        x, dtype = x.to(dtype), None
    return vector_norm(x, ord, _canonical_dim(dim, input.dim()), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        c = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else \
            D.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else D.float32
    dims = _canonical_dim(dim, input.dim())
    if mask is None:
        count = sum(torch.ones(tuple(input.shape), dtype=D.int64, device=input.device), dim,
                    keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dims, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = input - sample_total / count
    # x * conj(x): |x|^2 for complex inputs (PyTorch keeps the complex dtype)
    total = sum(x * x.conj() if x.dtype.is_complex else x * x, dim, keepdim=keepdim,
                dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if c != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = torch.maximum(count.to(real) - c, torch.zeros((), dtype=real,
                                                                device=input.device))
    out = (total / count).to(dtype)
    return torch.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    _strided(input, "var")
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    _strided(input, "std")
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalization(fn, op, identity_of, input, dim, dtype, mask):
    _strided(input, op)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return fn(_combine(identity_of, input, mask), d, dtype=dtype)


def softmax(input, dim, *, dtype=None, mask=None):
    return _normalization(torch.softmax, "softmax", "amax", input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    return _normalization(torch.log_softmax, "log_softmax", "amax", input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    return _normalization(lambda x, d, dtype: torch.softmax(-x, d, dtype=dtype), "softmin",
                          "amin", input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    _strided(input, "normalize")
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = torch.maximum(nrm, torch.full((), eps, dtype=nrm.dtype, device=nrm.device))
    return _combine("sum", input, mask) / denom
