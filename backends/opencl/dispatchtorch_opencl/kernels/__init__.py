"""The kernel table: every prim of dispatchtorch's catalogue in OpenCL C, and the composite
rows with a kernel of their own (linear, softmax, log_softmax, nll_loss, and the
backward rows of softmax, log_softmax and nll_loss)."""
from .elementwise import KERNELS as _ELEMENTWISE
from .reduction import KERNELS as _REDUCTION
from .indexing import KERNELS as _INDEXING
from .matmul import KERNELS as _MATMUL
from .linear import KERNELS as _LINEAR
from .softmax import KERNELS as _SOFTMAX
from .nll_loss import KERNELS as _NLL
from .softmax_backward import KERNELS as _SOFTMAX_BACKWARD
from .optim import KERNELS as _OPTIM
from .scan import KERNELS as _SCAN
from .sort import KERNELS as _SORT

KERNELS = {**_ELEMENTWISE, **_REDUCTION, **_SCAN, **_MATMUL, **_LINEAR, **_SOFTMAX, **_SOFTMAX_BACKWARD,
           **_NLL, **_INDEXING, **_SORT, **_OPTIM}
