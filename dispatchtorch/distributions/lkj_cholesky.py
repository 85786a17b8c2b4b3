"""LKJCholesky(dim, concentration): Cholesky factors of LKJ-distributed correlation
matrices, sampled by PyTorch's onion method (Beta marginals times uniform directions)."""
from __future__ import annotations

import math

from .. import _dtype as D
from .. import ops as _ops
from .._shape import Size
from ..ops.norms import vector_norm
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _ops.arange(self.dim - 1, dtype=self.concentration.dtype,
                             device=self.concentration.device)
        offset = _ops.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = _ops.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                              device=y.device).tril(-1)
        u_hypersphere = u_normal / vector_norm(u_normal, dim=-1, keepdim=True)
        first_row = _ops.arange(self.dim, device=y.device).unsqueeze(-1) == 0
        u_hypersphere = _ops.where(first_row, 0.0, u_hypersphere)
        w = _ops.sqrt(y) * u_hypersphere
        diag_elems = _ops.clamp(1 - _ops.sum(w ** 2, dim=-1), min=D.finfo(w.dtype).tiny).sqrt()
        return w + _ops.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _ops.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = _ops.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = _ops.lgamma(alpha) * dm1
        numerator = _ops.mvlgamma(alpha - 0.5, dm1)
        normalize_term = 0.5 * dm1 * math.log(math.pi) + numerator - denominator
        return unnormalized_log_pdf - normalize_term
