"""The cases tools/special_values.py sweeps: each op at its special values.

A case is a function of the library module (torch or dispatchtorch) and tensors, and
the rows of its inputs. Batched cases stack every row (once per incoming gradient
value) along a leading dimension the op keeps; the others run row by row (full
reductions, losses with a reduction).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

inf, nan = float("inf"), float("nan")
GRADS = [1.0, -1.0, inf, -inf, nan, -0.0, 0.0, 2.5]
SPECIALS = [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-300]


@dataclass
class Case:
    name: str
    fn: object
    data: list                    # rows: tuples of per-argument values
    batched: bool = True
    grad: tuple | None = None     # which arguments require grad (None: every float one)
    int_dtype: str = "int64"

    def rows(self):
        return self.data

    def grad_args(self, n):
        return set(range(n)) if self.grad is None else set(self.grad)


CASES: list[Case] = []


def add(name, fn, data, **kw):
    CASES.append(Case(name, fn, data, **kw))


def unary_rows(extra=()):
    return [([x],) for x in SPECIALS + list(extra)]


def binary_rows(extra=()):
    vals = SPECIALS[:11] + list(extra)
    return [([a], [b]) for a, b in itertools.product(vals, vals)]


def _get(T, path):
    obj = T
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# --- elementwise, unary -------------------------------------------------------------
UNARY = {
    "abs": (), "acos": (1.0, -1.0), "acosh": (1.0,), "asin": (), "asinh": (), "atan": (),
    "atanh": (), "ceil": (), "cos": (), "cosh": (), "deg2rad": (), "digamma": (-2.0,),
    "erf": (), "erfc": (), "erfinv": (), "exp": (), "exp2": (), "expm1": (), "floor": (),
    "frac": (), "i0": (), "lgamma": (-2.0,), "log": (), "log10": (), "log1p": (-1.0,),
    "log2": (), "logit": (), "neg": (), "rad2deg": (), "reciprocal": (), "relu": (),
    "round": (2.5,), "rsqrt": (), "sigmoid": (), "sign": (), "sgn": (), "sin": (),
    "sinc": (), "sinh": (), "sqrt": (), "square": (), "tan": (), "tanh": (), "trunc": (),
    "nan_to_num": (), "angle": (), "positive": (), "fix": (),
    "special.entr": (), "special.erfcx": (), "special.i0e": (), "special.i1": (),
    "special.i1e": (), "special.log_ndtr": (), "special.ndtri": (), "special.expit": (),
    "special.ndtr": (), "special.sinc": (),
    "nn.functional.silu": (), "nn.functional.gelu": (), "nn.functional.elu": (),
    "nn.functional.selu": (), "nn.functional.celu": (), "nn.functional.leaky_relu": (),
    "nn.functional.hardswish": (3.0, -3.0), "nn.functional.hardsigmoid": (3.0, -3.0),
    "nn.functional.hardtanh": (), "nn.functional.relu6": (6.0,),
    "nn.functional.softplus": (20.0, 25.0), "nn.functional.softsign": (),
    "nn.functional.tanhshrink": (), "nn.functional.hardshrink": (),
    "nn.functional.softshrink": (), "nn.functional.mish": (),
    "nn.functional.logsigmoid": (), "nn.functional.sigmoid": (), "nn.functional.tanh": (),
}
for _name, _extra in UNARY.items():
    add(_name, (lambda p: lambda T, x: _get(T, p)(x))(_name), unary_rows(_extra))

add("gelu_tanh", lambda T, x: T.nn.functional.gelu(x, approximate="tanh"), unary_rows())
add("logit_eps", lambda T, x: T.logit(x, eps=0.25), unary_rows([0.25, 0.75]))
add("leaky_relu_neg", lambda T, x: T.nn.functional.leaky_relu(x, -0.5), unary_rows())
add("elu_alpha", lambda T, x: T.nn.functional.elu(x, alpha=-2.0), unary_rows())
add("softplus_beta", lambda T, x: T.nn.functional.softplus(x, beta=2.0, threshold=4.0),
    unary_rows([2.0, 3.0]))
add("threshold", lambda T, x: T.nn.functional.threshold(x, 0.5, -7.0), unary_rows())
add("rrelu_eval", lambda T, x: T.nn.functional.rrelu(x, training=False), unary_rows())
add("hardtanh_bounds", lambda T, x: T.nn.functional.hardtanh(x, -0.5, 2.0), unary_rows())
add("clamp_scalar", lambda T, x: T.clamp(x, -0.5, 2.0), unary_rows())
add("clamp_min", lambda T, x: T.clamp(x, min=0.0), unary_rows())
add("clamp_max", lambda T, x: T.clamp(x, max=0.0), unary_rows())
add("clamp_equal", lambda T, x: T.clamp(x, 1.0, 1.0), unary_rows())
add("pow_0", lambda T, x: T.pow(x, 0), unary_rows())
add("pow_0.0", lambda T, x: T.pow(x, 0.0), unary_rows())
add("pow_2", lambda T, x: T.pow(x, 2), unary_rows())
add("pow_half", lambda T, x: T.pow(x, 0.5), unary_rows())
add("pow_neg", lambda T, x: T.pow(x, -1.0), unary_rows())
add("pow_neg_half", lambda T, x: T.pow(x, -1.5), unary_rows())
add("pow_1", lambda T, x: T.pow(x, 1), unary_rows())
add("pow_inf", lambda T, x: T.pow(x, inf), unary_rows())
add("rpow", lambda T, x: T.pow(2.0, x), unary_rows())
add("rpow_0", lambda T, x: T.pow(0.0, x), unary_rows())
add("rpow_neg", lambda T, x: T.pow(-2.0, x), unary_rows())
add("mul_scalar", lambda T, x: x * 0.0, unary_rows())
add("div_scalar0", lambda T, x: x / 0.0, unary_rows())
add("rdiv", lambda T, x: 1.0 / x, unary_rows())
add("polygamma1", lambda T, x: T.polygamma(1, x), unary_rows())
add("mvlgamma", lambda T, x: T.mvlgamma(x, 1), unary_rows())
add("sum_to_scalar", lambda T, x: x.sum(dim=1), unary_rows())

# --- elementwise, binary and ternary --------------------------------------------------
BINARY = ["add", "sub", "mul", "div", "pow", "atan2", "hypot", "fmod", "remainder",
          "maximum", "minimum", "fmax", "fmin", "copysign", "xlogy", "special.xlog1py",
          "logaddexp", "logaddexp2", "floor_divide", "special.zeta", "igamma", "igammac",
          "nextafter", "ldexp", "true_divide", "rsub"]
for _name in BINARY:
    add(_name, (lambda p: lambda T, a, b: _get(T, p)(a, b))(_name), binary_rows())
add("div_trunc", lambda T, a, b: T.div(a, b, rounding_mode="trunc"), binary_rows())
add("div_floor", lambda T, a, b: T.div(a, b, rounding_mode="floor"), binary_rows())
add("clamp_tensor", lambda T, x, lo: T.clamp(x, lo, lo + 1.0), binary_rows())
add("clamp_min_tensor", lambda T, x, lo: T.clamp(x, min=lo), binary_rows())
add("where", lambda T, a, b: T.where(a > b, a, b), binary_rows())
add("where_eq", lambda T, a, b: T.where(a == b, a, b), binary_rows())
add("lerp", lambda T, a, b: T.lerp(a, b, 0.5), binary_rows())
add("lerp_w", lambda T, a, w: T.lerp(a, T.ones_like(a) * 2.0, w), binary_rows())
add("addcmul", lambda T, a, b: T.addcmul(a, a, b, value=2.0), binary_rows())
add("addcdiv", lambda T, a, b: T.addcdiv(a, a, b, value=2.0), binary_rows())
add("prelu", lambda T, x, w: T.nn.functional.prelu(x, w.reshape(-1)[:1]),
    [([x], [w]) for x in SPECIALS for w in [0.25, 0.0, -0.0, inf, nan]], batched=False)
add("dist_elem", lambda T, a, b: T.dist(a, b), binary_rows(), batched=False)

# --- reductions and scans over dim 1 -------------------------------------------------
ROWS = [[1.0, 3.0, 3.0, 2.0], [3.0, 3.0, 3.0, 3.0], [0.0, -0.0, 0.0, -0.0],
        [-0.0, -0.0, -0.0, -0.0], [inf, 1.0, inf, 2.0], [-inf, -inf, 1.0, 2.0],
        [nan, 1.0, 2.0, 3.0], [1.0, nan, nan, 2.0], [inf, -inf, 0.0, 1.0],
        [-inf, -inf, -inf, -inf], [0.0, 0.0, 0.0, 0.0], [2.0, -1.0, 0.5, -3.0],
        [inf, inf, inf, inf], [1.0, 0.0, -0.0, 2.0]]
R = [(r,) for r in ROWS]
DIM = {
    "sum": lambda T, x: x.sum(1), "mean": lambda T, x: x.mean(1),
    "prod": lambda T, x: x.prod(1), "amax": lambda T, x: x.amax(1),
    "amin": lambda T, x: x.amin(1), "max_dim": lambda T, x: x.max(1),
    "min_dim": lambda T, x: x.min(1), "median_dim": lambda T, x: x.median(1),
    "nanmedian_dim": lambda T, x: x.nanmedian(1), "sort": lambda T, x: x.sort(1),
    "sort_desc": lambda T, x: x.sort(1, descending=True),
    "sort_stable": lambda T, x: T.sort(x, dim=1, stable=True),
    "argsort_gather": lambda T, x: x.gather(1, x.argsort(1)),
    "topk": lambda T, x: x.topk(2, 1), "topk_smallest": lambda T, x: x.topk(2, 1, largest=False),
    "kthvalue": lambda T, x: x.kthvalue(2, 1), "cummax": lambda T, x: x.cummax(1),
    "cummin": lambda T, x: x.cummin(1), "cumsum": lambda T, x: x.cumsum(1),
    "cumprod": lambda T, x: x.cumprod(1), "logcumsumexp": lambda T, x: x.logcumsumexp(1),
    "logsumexp": lambda T, x: x.logsumexp(1), "softmax": lambda T, x: x.softmax(1),
    "log_softmax": lambda T, x: x.log_softmax(1),
    "softmin": lambda T, x: T.nn.functional.softmin(x, 1),
    "norm2": lambda T, x: x.norm(dim=1), "norm1": lambda T, x: x.norm(1, dim=1),
    "norm_inf": lambda T, x: x.norm(inf, dim=1), "norm_ninf": lambda T, x: x.norm(-inf, dim=1),
    "norm0": lambda T, x: x.norm(0, dim=1), "norm3": lambda T, x: x.norm(3, dim=1),
    "norm_half": lambda T, x: x.norm(0.5, dim=1),
    "vector_norm": lambda T, x: T.linalg.vector_norm(x, dim=1),
    "vector_norm_inf": lambda T, x: T.linalg.vector_norm(x, inf, dim=1),
    "std": lambda T, x: x.std(1), "var": lambda T, x: x.var(1),
    "std0": lambda T, x: x.std(1, correction=0), "var0": lambda T, x: x.var(1, correction=0),
    "std_mean": lambda T, x: T.std_mean(x, 1), "var_mean": lambda T, x: T.var_mean(x, 1),
    "nansum": lambda T, x: x.nansum(1), "nanmean": lambda T, x: x.nanmean(1),
    "aminmax": lambda T, x: tuple(T.aminmax(x, dim=1)),
    "msort": lambda T, x: T.msort(x.t()).t(),
    "normalize": lambda T, x: T.nn.functional.normalize(x, dim=1),
    "layer_norm": lambda T, x: T.nn.functional.layer_norm(x, (4,)),
    "rms_norm": lambda T, x: T.nn.functional.rms_norm(x, (4,)),
    "group_norm": lambda T, x: T.nn.functional.group_norm(x.reshape(-1, 2, 2), 1),
    "glu": lambda T, x: T.nn.functional.glu(x, 1),
    "max_pool1d": lambda T, x: T.nn.functional.max_pool1d(x.unsqueeze(1), 2).squeeze(1),
    "max_pool1d_ov": lambda T, x: T.nn.functional.max_pool1d(x.unsqueeze(1), 3, 1).squeeze(1),
    "max_pool2d": lambda T, x: T.nn.functional.max_pool2d(x.reshape(-1, 1, 2, 2), 2).flatten(1),
    "max_pool2d_ov": lambda T, x: T.nn.functional.max_pool2d(
        x.reshape(-1, 1, 2, 2), 2, 1, padding=1).flatten(1),
    "adaptive_max_pool2d": lambda T, x: T.nn.functional.adaptive_max_pool2d(
        x.reshape(-1, 1, 2, 2), 1).flatten(1),
    "avg_pool2d": lambda T, x: T.nn.functional.avg_pool2d(x.reshape(-1, 1, 2, 2), 2).flatten(1),
    "lp_pool1d": lambda T, x: T.nn.functional.lp_pool1d(x.unsqueeze(1), 2.0, 2).squeeze(1),
    "cumulative_trapezoid": lambda T, x: T.cumulative_trapezoid(x, dim=1),
    "diff": lambda T, x: T.diff(x, dim=1),
    "renorm": lambda T, x: T.renorm(x, 2, 0, 1.0),
    "logsumexp_keep": lambda T, x: x.logsumexp(1, keepdim=True),
}
for _name, _fn in DIM.items():
    add(_name, _fn, R)

WHOLE = {
    "max_all": lambda T, x: x.max(), "min_all": lambda T, x: x.min(),
    "median_all": lambda T, x: x.median(), "nanmedian_all": lambda T, x: x.nanmedian(),
    "amax_all": lambda T, x: x.amax(), "norm_all": lambda T, x: x.norm(),
    "std_all": lambda T, x: x.std(), "var_all": lambda T, x: x.var(),
    "std_one": lambda T, x: x[:1].std(), "var_one": lambda T, x: x[:1].var(),
    "std_one0": lambda T, x: x[:1].std(correction=0),
    "logsumexp_all": lambda T, x: x.logsumexp(0), "prod_all": lambda T, x: x.prod(),
    "pdist": lambda T, x: T.nn.functional.pdist(x.reshape(2, 2)),
    "pdist_p1": lambda T, x: T.nn.functional.pdist(x.reshape(2, 2), p=1),
    "pdist_inf": lambda T, x: T.nn.functional.pdist(x.reshape(2, 2), p=inf),
    "cdist": lambda T, x: T.cdist(x.reshape(1, 2, 2)[:, :1], x.reshape(1, 2, 2)[:, 1:]),
    "cdist_self": lambda T, x: T.cdist(x.reshape(1, 2, 2), x.reshape(1, 2, 2)),
    "cdist_p1": lambda T, x: T.cdist(x.reshape(1, 2, 2), x.reshape(1, 2, 2).flip(1), p=1),
    "cdist_inf": lambda T, x: T.cdist(x.reshape(1, 2, 2), x.reshape(1, 2, 2).flip(1), p=inf),
    "dist": lambda T, x: T.dist(x[:2], x[2:]), "dist_p1": lambda T, x: T.dist(x[:2], x[2:], 1),
    "dist_inf": lambda T, x: T.dist(x[:2], x[2:], inf),
    "pairwise_distance": lambda T, x: T.nn.functional.pairwise_distance(x[:2], x[2:]),
    "cosine_similarity": lambda T, x: T.nn.functional.cosine_similarity(x[:2], x[2:], dim=0),
    "trace": lambda T, x: x.reshape(2, 2).trace(),
    "det": lambda T, x: T.linalg.det(x.reshape(2, 2)),
    "matrix_norm": lambda T, x: T.linalg.matrix_norm(x.reshape(2, 2)),
    "dot": lambda T, x: T.dot(x[:2], x[2:]),
}
for _name, _fn in WHOLE.items():
    add(_name, _fn, R, batched=False)


# --- losses --------------------------------------------------------------------------
def _pairs(vals_a, vals_b):
    return [([a], [b]) for a, b in itertools.product(vals_a, vals_b)]


LV = [0.0, -0.0, 1.0, -1.0, 0.5, inf, -inf, nan, 2.0]
F = "nn.functional."
for _loss, _kw in [("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {}),
                   ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                   ("huber_loss", {}), ("huber_loss", {"delta": 0.5}),
                   ("soft_margin_loss", {}), ("kl_div", {}), ("kl_div", {"log_target": True}),
                   ("poisson_nll_loss", {}), ("poisson_nll_loss", {"log_input": False}),
                   ("binary_cross_entropy_with_logits", {}), ("hinge_embedding_loss", {})]:
    _tag = "_".join(f"{k}{v}" for k, v in _kw.items())
    for _red in ("none", "mean"):
        add(f"{_loss}{'_' + _tag if _tag else ''}_{_red}",
            (lambda l, kw, r: lambda T, a, b: _get(T, F + l)(a, b, reduction=r, **kw))(
                _loss, _kw, _red), _pairs(LV, LV), batched=_red == "none")
BV = [0.0, 1.0, 0.5, 1e-20, 1.0 - 1e-16, -0.0, nan]
for _red in ("none", "mean"):
    add(f"binary_cross_entropy_{_red}", (lambda r: lambda T, a, b: T.nn.functional.
        binary_cross_entropy(a, b, reduction=r))(_red), _pairs(BV, BV), batched=_red == "none")

# cross_entropy / nll_loss: rows of 3 logits, a target
LOGITS = [[1.0, 2.0, 3.0], [-inf, 0.0, 1.0], [-inf, -inf, 1.0], [-inf, -inf, -inf],
          [inf, 0.0, 1.0], [nan, 0.0, 1.0], [0.0, 0.0, 0.0], [2.0, 2.0, -inf]]
CE_ROWS = [([l], np.asarray([t])) for l in LOGITS for t in (0, 2, 1)]
for _tag, _kw in [("", {}), ("_ignore", {"ignore_index": 2}), ("_ls", {"label_smoothing": 0.2}),
                  ("_ls_ignore", {"label_smoothing": 0.2, "ignore_index": 0}),
                  ("_sum", {"reduction": "sum"}), ("_none", {"reduction": "none"}),
                  ("_weight", {"weight": [1.0, 0.0, 2.0]})]:
    def _ce(T, x, t, kw=_kw):
        kw = dict(kw)
        if "weight" in kw:
            kw["weight"] = T.tensor(kw["weight"], dtype=x.dtype, device=x.device)
        return T.nn.functional.cross_entropy(x, t, **kw)
    add("cross_entropy" + _tag, _ce, CE_ROWS, batched=False)

    def _nll(T, x, t, kw=_kw):
        kw = dict(kw)
        kw.pop("label_smoothing", None)
        if "weight" in kw:
            kw["weight"] = T.tensor(kw["weight"], dtype=x.dtype, device=x.device)
        return T.nn.functional.nll_loss(x, t, **kw)
    if "label_smoothing" not in _kw:
        add("nll_loss" + _tag, _nll, CE_ROWS, batched=False)
add("cross_entropy_probs", lambda T, x, p: T.nn.functional.cross_entropy(x, p.softmax(1)),
    [([l], [p]) for l in LOGITS for p in LOGITS[:3]], batched=False)
