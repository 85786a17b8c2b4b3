"""The kernel table: every prim of dispatchtorch's catalogue, in OpenCL C."""
from .elementwise import KERNELS as _ELEMENTWISE
from .reduction import KERNELS as _REDUCTION
from .indexing import KERNELS as _INDEXING
from .matmul import KERNELS as _MATMUL
from .optim import KERNELS as _OPTIM
from .scan import KERNELS as _SCAN
from .sort import KERNELS as _SORT

KERNELS = {**_ELEMENTWISE, **_REDUCTION, **_SCAN, **_MATMUL, **_INDEXING, **_SORT, **_OPTIM}
