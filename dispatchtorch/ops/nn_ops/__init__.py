"""The composite ops of the neural-network layers: one schema row each.

Each row is a composite (kind "nn"): a decomposition into public ops, which every
backend runs, and where it is cheaper than differentiating the decomposition, a
derivative rule of its own (then the forward runs as one graph node, whichever
kernel computed it). A backend may register its own fused kernel under the row's
name; it is called as `fn(*outs, *inputs, **params)`, inputs in the row's `args`
order (None where an optional input is absent), params as in the row's signature,
outputs allocated by the frontend with the shapes `meta` gives. `nn.functional`
validates arguments and calls these rows; nothing here checks user input.
"""
from ._row import Composite  # noqa: F401
from .softmax import LOG_SOFTMAX, SOFTMAX  # noqa: F401
from .activation import GELU, SILU  # noqa: F401
from .linear import LINEAR  # noqa: F401
from .conv import COL2IM, CONV2D, CONV_TRANSPOSE2D, IM2COL, transposed_size  # noqa: F401
from .pool import AVG_POOL2D, MAX_POOL2D, avg_divisor, max_pool_argmax  # noqa: F401
from .norm import BATCH_NORM, GROUP_NORM, LAYER_NORM, RMS_NORM  # noqa: F401
from .embedding import DROPOUT, EMBEDDING  # noqa: F401
from .attention import SDPA, causal_mask  # noqa: F401
from .loss import CROSS_ENTROPY, NLL_LOSS  # noqa: F401

METHODS = {
    "softmax": lambda self, dim, dtype=None: SOFTMAX(self if dtype is None else self.to(dtype),
                                                     dim=dim),
    "log_softmax": lambda self, dim, dtype=None: LOG_SOFTMAX(
        self if dtype is None else self.to(dtype), dim=dim),
}
