"""dispatchtorch.special: torch.special names for ops of the reference set."""
from .ops import (erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, round,  # noqa: F401
                  sigmoid as expit, xlogy)
from .ops.scans import logcumsumexp  # noqa: F401
from .ops.special_functions import SPECIAL as _S  # noqa: E402
from .ops.pointwise_more import PUBLIC as _P  # noqa: E402

globals().update(_S)
sinc = _P["sinc"]
from .ops.orthogonal_polynomials import SPECIAL as _O  # noqa: E402

globals().update(_O)
