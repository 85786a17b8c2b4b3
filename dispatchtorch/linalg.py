"""dispatchtorch.linalg: the torch.linalg functions the reference op set covers."""
from .ops.linalg import matmul, multi_dot  # noqa: F401
from .ops.norms import linalg_norm as norm  # noqa: F401
from .ops.norms import matrix_norm, vecdot, vector_norm  # noqa: F401
from .ops.products_more import LINALG as _P  # noqa: E402
from .ops.shape_more import LINALG as _S  # noqa: E402

from .ops.linalg_more import LINALG as _D  # noqa: E402
from .ops.ldl import LINALG as _LDL  # noqa: E402  (ldl_factor, ldl_factor_ex, ldl_solve)
from .ops.linalg_eig import LINALG as _EIG  # noqa: E402  (eig, eigvals)

globals().update({**_P, **_S, **_D, **_LDL, **_EIG})
