"""Reductions: sum, prod, amax, amin, argmax, argmin and the public functions made of
them (mean, max, min, all, any)."""
import dispatchtorch as torch

from .. import samples as S
from ..case import Case, Tol

SUM_ORDER = Tol("backends sum in different orders (trees, blocks); the large samples add "
                "about 10**6 terms, whose rounding differs by a few ulp times log2(n)",
                float32=(1e-5, 1e-5), float64=(1e-7, 1e-7))
PROD_ORDER = Tol("products accumulate rounding error linearly in the number of factors, "
                 "and backends multiply in different orders", float32=(1e-5, 1e-5))

_prod_samples = S.by_dtype(
    S.reduction(-2, 2, tuple_dims=False, large_range=(0.999, 1.001), large_all=False,
                subnormals=False),
    S.reduction(1, 3, tuple_dims=False, large_all=False))
NO_IDENTITY = (RuntimeError, IndexError)      # amax of an empty tensor: all dims, dim 0
NO_IDENTITY_ARG = (IndexError, IndexError)    # argmax: PyTorch raises IndexError for both

CASES = [
    Case("sum", torch.sum, S.reduction(), tol=SUM_ORDER),
    Case("sum", torch.mean, S.reduction(), name="mean", dtypes="floating", tol=SUM_ORDER),
    Case("prod", torch.prod, _prod_samples, tol=PROD_ORDER),
    Case("amax", torch.amax, S.reduction(empty_raises=NO_IDENTITY)),
    Case("amin", torch.amin, S.reduction(empty_raises=NO_IDENTITY)),
    Case("argmax", torch.argmax, S.reduction(tuple_dims=False, empty_raises=NO_IDENTITY_ARG),
         dtypes="numeric"),
    Case("argmin", torch.argmin, S.reduction(tuple_dims=False, empty_raises=NO_IDENTITY_ARG),
         dtypes="numeric"),
    Case("argmax", torch.max, S.reduction(tuple_dims=False, empty_raises=(RuntimeError, IndexError)),
         name="max"),
    Case("argmin", torch.min, S.reduction(tuple_dims=False, empty_raises=(RuntimeError, IndexError)),
         name="min"),
    Case("amax", torch.any, S.reduction(), name="any"),
    Case("amin", torch.all, S.reduction(), name="all"),
]
