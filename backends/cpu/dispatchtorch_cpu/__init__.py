"""dispatchtorch's reference backend: every prim in numpy on the host."""
import warnings

from dispatchtorch.backend import hookimpl

# IEEE results (x / 0 -> inf, overflow -> inf, sqrt(-1) -> nan) are the answer, as in
# PyTorch, not a reason to warn: numpy's floating-point warnings raised in this
# package's kernels are silenced once here rather than with np.errstate on every call
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"dispatchtorch_cpu\.")


@hookimpl
def dispatchtorch_backend():
    from .backend import CPUBackend
    return CPUBackend()
