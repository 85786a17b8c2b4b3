"""Helpers of PyTorch's torch/distributions/utils.py the distributions here share."""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number

from .. import _dtype as D
from .. import autograd as _autograd
from .. import ops as _ops
from .._tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "tril_matrix_to_vec", "vec_to_tril_matrix",
           "probs_to_logits"]


def broadcast_all(*values):
    """Numbers become tensors of the first tensor's dtype and device (else the default
    dtype); all are broadcast to one shape."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=D.get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else _ops.tensor(v, **options) for v in values]
    return _ops.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return _ops.empty(shape, dtype=dtype, device=device).normal_()


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return _ops.sigmoid(logits)
    return _ops.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _ops.log(ps_clamped) - _ops.log1p(-ps_clamped)
    return _ops.log(ps_clamped)


class lazy_property:
    """Computed on first access (with grad enabled, as PyTorch's) and then stored on the
    instance, so `probs` and `logits` are derived from each other only when read."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with _autograd.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _sum_rightmost(value, dim):
    """Sums the rightmost `dim` dims (an event's log-densities into one)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def _softplus(x):
    """log(1 + exp(x)) without overflow, gradient sigmoid(x) also at 0 (nn.functional
    sits beside this package, so not its softplus)."""
    return _ops.logaddexp(x, _ops.zeros_like(x))


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if j - i <= diag:
                rows.append(i)
                cols.append(j)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of tril_matrix_to_vec: a square matrix with `vec` in its lower triangle."""
    b = 1 + 2 * diag
    n = (-b + (b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = D.finfo(D.float32).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, Tensor) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if j - i <= diag:
                rows.append(i)
                cols.append(j)
    mat[..., rows, cols] = vec
    return mat


def _expanded(dist, cls, batch_shape, _instance, names, event_shape=None):
    """dist.expand(batch_shape) for a distribution whose parameters `names` are tensors
    of batch_shape (+ event_shape when given): each parameter expanded, no re-check."""
    from .._shape import Size
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            extra = tuple(value.shape[len(dist.batch_shape):])
            setattr(new, name, value.expand(batch_shape + extra))
    if "_param" in dist.__dict__:           # logits win when both are known, as PyTorch's
        new._param = new.logits if "logits" in dist.__dict__ else new.probs
    super(cls, new).__init__(batch_shape, dist.event_shape if event_shape is None else event_shape,
                             validate_args=False)
    new._validate_args = dist._validate_args
    return new


class _BinaryLogits:
    """probs and logits of a one-parameter binary family (Bernoulli, Binomial,
    NegativeBinomial, LogitRelaxedBernoulli, Geometric): each derived from the other on
    first read."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _BinaryParam(_BinaryLogits):
    """... whose parameter shape is that of the one given (`_param`)."""

    @property
    def param_shape(self):
        return self._param.size()
