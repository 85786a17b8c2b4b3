"""Tensor methods and torch functions that PyTorch keeps under a second name, or as the
in-place form of an op that is already here: each one is the existing op, so its
semantics, errors and gradient are that op's (nothing is re-implemented)."""
from __future__ import annotations

from .._tensor import Tensor
from ._composite import inplace_variant
from . import (complex_ops, linalg, pointwise as P, pointwise_more, random_sampling, shape_more,
               special_functions, views)


def _polygamma(input, n):
    return special_functions.polygamma(n, input)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes; PyTorch's "unsafe" only skips its view checks in autograd."""
    return shape_more.split_with_sizes(input, split_sizes, dim)


conj_physical_ = inplace_variant(complex_ops.conj_physical, "conj_physical_")

# names shared by Tensor methods and torch functions
PUBLIC = {
    "conj_physical_": conj_physical_,
    "i0_": special_functions.INPLACE["i0_"],
    "ldexp_": pointwise_more.METHODS["ldexp_"],
    "addmv_": linalg.addmv_,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
}

METHODS = {
    # the comparison and arithmetic in-place forms under their long names
    "greater_": P.INPLACE["gt_"], "greater_equal_": P.INPLACE["ge_"],
    "less_": P.INPLACE["lt_"], "less_equal_": P.INPLACE["le_"],
    "not_equal_": P.INPLACE["ne_"], "multiply_": P.INPLACE["mul_"], "subtract_": P.sub_,
    "multinomial": random_sampling.multinomial,
    "mvlgamma_": inplace_variant(special_functions.mvlgamma, "mvlgamma_"),
    "polygamma_": inplace_variant(_polygamma, "polygamma_"),
    "conj_physical_": conj_physical_,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
    "as_strided_scatter": views.view_scatter,
    "const_data_ptr": Tensor.data_ptr,     # no copy-on-write storages here: data_ptr itself
}
