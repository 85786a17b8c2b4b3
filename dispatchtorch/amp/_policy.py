"""PyTorch's autocast op policy, and the wrappers that apply it.

Which ops run in the lower-precision dtype, which are computed in float32, and which
take the widest floating type of their inputs, per device: PyTorch's lists
(aten/src/ATen/autocast_mode.cpp; CPU's differs from CUDA's, which the other device
types here follow). The public functions and Tensor methods named in the lists are
wrapped the first time a program enters autocast; until then nothing is wrapped and
the op path is unchanged. A wrapper costs one thread-local attribute check when
autocast is off. Inside a wrapped op autocast is off (as PyTorch's autocast kernels
exclude the autocast key), so the ops it is made of are not cast again.
"""
from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from .._root import ROOT
from ._state import STATE, dtype_name

LOWER, FP32, PROMOTE, BANNED = "lower", "fp32", "promote", "banned"

_LOSSES = ["cross_entropy", "mse_loss", "l1_loss", "nll_loss", "binary_cross_entropy_with_logits",
           "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "poisson_nll_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "ctc_loss",
           "gaussian_nll_loss", "multilabel_soft_margin_loss"]
_LOWER_COMMON = ["matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "linear", "conv1d", "conv2d",
                 "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
                 "scaled_dot_product_attention", "einsum", "__matmul__", "__rmatmul__"]

CPU = {
    **{n: LOWER for n in _LOWER_COMMON + ["tensordot"]},
    **{n: FP32 for n in _LOSSES + ["binary_cross_entropy", "prod", "avg_pool3d", "max_pool3d",
                                   "adaptive_avg_pool3d", "grid_sample", "cdist", "trace",
                                   "quantile", "nanquantile", "inverse", "pinverse", "cholesky",
                                   "cholesky_inverse", "cholesky_solve", "stft", "polar"]},
    **{n: PROMOTE for n in ["cat", "stack", "index_copy"]},
}
OTHER = {           # CUDA's lists
    **{n: LOWER for n in _LOWER_COMMON + ["mv", "addmv", "addr", "chain_matmul", "multi_dot",
                                          "lstm_cell", "gru_cell", "rnn_tanh_cell",
                                          "rnn_relu_cell"]},
    **{n: FP32 for n in _LOSSES + [
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "__pow__", "__rpow__", "softplus",
        "layer_norm", "group_norm", "norm", "cosine_similarity", "dist", "pdist", "cdist",
        "renorm", "logsumexp", "prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum",
        "vector_norm", "matrix_norm", "interpolate", "grid_sample"]},
    **{n: PROMOTE for n in ["addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot",
                            "index_put", "scatter_add", "tensordot", "cat", "stack"]},
    "binary_cross_entropy": BANNED,
}
# padding modes PyTorch's CPU list computes in float32 (reflection_pad*, replication_pad*)
_FP32_PAD_MODES = ("reflect", "replicate")

_installed = set()
_BANNED_MSG = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
               "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
               "layer.\nIn this case, combine the two layers using "
               "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
               "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


def _device_of(args, kwargs):
    """The device type of the first floating tensor among the arguments (lists too)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            if a._dtype.is_floating_point:
                return a.device.type
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor) and b._dtype.is_floating_point:
                    return b.device.type
    return None


def _eligible(t, device_type):
    return isinstance(t, Tensor) and t._dtype.is_floating_point and t._dtype is not D.float64 \
        and t.device.type == device_type


def _cast(t, dtype, device_type):
    """t in dtype; cast copies of leaf weights are cached for the autocast region."""
    if not _eligible(t, device_type) or t._dtype is dtype:
        return t
    if STATE.cache_enabled and t.is_leaf and t.requires_grad:
        hit = STATE.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1].dtype is dtype:
            return hit[1]
        out = t.to(dtype)
        STATE.cache[id(t)] = (t, out)
        return out
    return t.to(dtype)


def _cast_all(value, dtype, device_type):
    if isinstance(value, Tensor):
        return _cast(value, dtype, device_type)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_cast(v, dtype, device_type) for v in value)
    return value


def _widest(args, kwargs, device_type):
    best = None
    for a in (*args, *kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if _eligible(t, device_type) and (best is None or t._dtype.itemsize > best.itemsize):
                best = t._dtype
    return best


def _call(fn, name, args, kwargs):
    device_type = _device_of(args, kwargs)
    if device_type is None or not STATE.enabled.get(device_type):
        return fn(*args, **kwargs)
    table = CPU if device_type == "cpu" else OTHER
    rule = table.get(name)
    if name == "pad" and device_type == "cpu":
        rule = FP32 if kwargs.get("mode", args[2] if len(args) > 2 else "constant") in \
            _FP32_PAD_MODES else None
    if rule is None:
        return fn(*args, **kwargs)
    if rule is BANNED:
        raise RuntimeError(_BANNED_MSG)
    if rule is LOWER:
        dtype = D.BY_NAME[dtype_name(device_type)]
    elif rule is FP32:
        dtype = D.float32
    else:
        dtype = _widest(args, kwargs, device_type)
    args = tuple(_cast_all(a, dtype, device_type) for a in args)
    kwargs = {k: _cast_all(v, dtype, device_type) for k, v in kwargs.items()}
    STATE.active = False                 # the op's own parts are not cast again
    try:
        return fn(*args, **kwargs)
    finally:
        STATE.active = True


def _wrap(fn, name):
    def autocast_op(*args, **kwargs):
        if not STATE.active:
            return fn(*args, **kwargs)
        return _call(fn, name, args, kwargs)
    autocast_op.__name__ = getattr(fn, "__name__", name)
    autocast_op.__qualname__ = getattr(fn, "__qualname__", name)
    autocast_op.__doc__ = getattr(fn, "__doc__", None)
    autocast_op.__wrapped__ = fn
    return autocast_op




def _namespaces():
    from .. import linalg, ops
    from ..nn import functional
    return [*ROOT, ops, functional, linalg, Tensor]


def install(device_type):
    """Wrap the functions and methods the device's policy names (once per table)."""
    table = CPU if device_type == "cpu" else OTHER
    key = "cpu" if device_type == "cpu" else "other"
    if key in _installed:
        return
    _installed.add(key)
    names = set(table) | ({"pad"} if key == "cpu" else set())
    wrapped = {}                          # one wrapper per function object: identities stay
    for ns in _namespaces():
        for name in names:
            fn = ns.__dict__.get(name) if isinstance(ns, type) else getattr(ns, name, None)
            if fn is None or not callable(fn) or getattr(fn, "__name__", "") == "autocast_op":
                continue
            w = wrapped.get(id(fn))
            if w is None:
                w = wrapped[id(fn)] = (fn, _wrap(fn, name))
            setattr(ns, name, w[1])
