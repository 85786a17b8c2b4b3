"""kl_divergence closed forms between different families (PyTorch's, the same pairs),
registered into kl.py's registry on import."""
from __future__ import annotations

import math
import re

from .. import ops as _ops
from .._shape import broadcast_shapes
from ..ops.decompositions import solve_triangular
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import (_EULER, _batch_trace_XXT, _infinite_like, _same_event, _solve_capacitance,
                 register_kl)
from .laplace import Laplace
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _ops.where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound),
                      math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * _ops.log(ratio) + ratio + q.concentration.lgamma()
            + q.concentration * _EULER - (1 + _EULER))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * _ops.log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * _ops.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = _ops.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = _ops.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * _ops.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * _ops.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = _ops.log(common_term)
    t2 = (q.concentration1 - 1) * (_ops.xlogy(p.high, p.high) - _ops.xlogy(p.low, p.low)
                                    - common_term) / common_term
    t3 = (q.concentration0 - 1) * (_ops.xlogy(1 - p.high, 1 - p.high)
                                    - _ops.xlogy(1 - p.low, 1 - p.low)
                                    + common_term) / common_term
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    return _ops.where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound),
                      math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _ops.where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_ops.xlogy(p.high, p.high) - _ops.xlogy(p.low, p.low)
                                   - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return _ops.where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (_ops.exp(-high_loc_diff) - _ops.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * (support_uniform)).log()
    t2 = (_ops.xlogy(p.high, p.high) - _ops.xlogy(p.low, p.low) - support_uniform) \
        / support_uniform
    result = t2 * (q.alpha + 1) - t1
    return _ops.where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - _ops.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return (-p.entropy() - q.rate.log()
            + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0)))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    E_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (p.concentration1 + p.concentration0 + 1)
          + E_beta.pow(2)) * 0.5
    return t1 + t2 + (t3 - q.loc * E_beta + q.loc.pow(2) * 0.5) / var_normal


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - _ops.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + _ops.square(q.loc / q.scale)) + _ops.log(q.scale)
    t3 = (p.variance + _ops.square(p.mean) - 2.0 * q.loc * p.mean) \
        / (2.0 * _ops.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = _ops.ge(q.low, p.support.lower_bound) | _ops.le(q.high, p.support.upper_bound)
    return _ops.where(outside, _ops.ones_like(result) * math.inf, result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = _ops.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    return t1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = (_ops.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration)
          - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * _ops.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    result = ((p.alpha / scale_rate_prod).log() - p.alpha.reciprocal()
              + p.alpha * scale_rate_prod / (p.alpha - 1) - 1)
    return _ops.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _ops.where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _ops.where(p.alpha <= 2, math.inf, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - _ops.log1p(-q.probs) - q._cont_bern_log_norm()
    outside = _ops.ge(p.high, q.support.upper_bound) | _ops.le(p.low, q.support.lower_bound)
    return _ops.where(outside, _ops.ones_like(result) * math.inf, result)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event(p, q, "(Low Rank) Multivariate Normals")
    qW, qD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    pL = p._unbroadcasted_scale_tril
    term1 = (_batch_lowrank_logdet(qW, qD, q._capacitance_tril)
             - 2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = _solve_capacitance(q)
    term21 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _same_event(p, q, "(Low Rank) Multivariate Normals")
    qL = q._unbroadcasted_scale_tril
    pW, pD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = (2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
             - _batch_lowrank_logdet(pW, pD, p._capacitance_tril))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    shape = tuple(broadcast_shapes(qL.shape[:-2], pW.shape[:-2]))
    n = p.event_shape[0]
    q_scale_tril = qL.expand(shape + (n, n))
    p_cov_factor = pW.expand(shape + (n, p.cov_factor.size(-1)))
    p_cov_diag = _ops.diag_embed(pD.sqrt()).expand(shape + (n, n))
    term21 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])


# The pairs whose KL is infinite (q's support misses part of p's), as PyTorch registers
# them: p's type, the parameter whose shape the result takes, and the q types.
_INFINITE = (
    (Beta, "concentration1", (Pareto,)),
    (Exponential, "rate", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gamma, "concentration", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Normal, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (ContinuousBernoulli, "probs", (Pareto,)),
    (Gumbel, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Laplace, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Pareto, "scale", (Beta, ContinuousBernoulli, Uniform)),
    (Poisson, "rate", (Bernoulli, Binomial)),
)


def _kl_infinity(param):
    def kl(p, q):
        return _infinite_like(getattr(p, param))
    return kl


for _p, _param, _qs in _INFINITE:
    _fn = _kl_infinity(_param)
    _fn.__name__ = _fn.__qualname__ = \
        "_kl_" + re.sub(r"(?<!^)(?=[A-Z])", "_", _p.__name__).lower() + "_infinity"
    for _q in _qs:
        register_kl(_p, _q)(_fn)
del _p, _param, _qs, _fn, _q
