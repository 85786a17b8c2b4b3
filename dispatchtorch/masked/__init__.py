"""dispatchtorch.masked: torch.masked's reductions and normalizations (strided tensors
with a boolean `mask` argument). MaskedTensor and sparse masks are absent."""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax,  # noqa: F401
                   logaddexp, logsumexp, mean, median, norm, normalize, prod, softmax, softmin,
                   std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
