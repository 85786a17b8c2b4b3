"""dispatchtorch: a PyTorch-style frontend whose every op goes through one dispatcher
to a backend package found through entry points.

    import dispatchtorch as torch
"""
from __future__ import annotations

del annotations                  # the __future__ feature object: torch has no torch.annotations
__version__ = "0.1.0"

from . import _dtype
from . import __future__  # noqa: F401  (torch.__future__: nn.Module conversion switches)
from ._device import device
from ._dtype import (bfloat16, dtype, finfo, float16, float32, float64, get_default_dtype,
                     int8, int16, int32, int64, promote_types, set_default_dtype, uint8)
from ._finfo import iinfo  # noqa: F401  (torch.iinfo: refuses bool, as PyTorch's)
from ._dtype import bool_ as bool  # noqa: A001  (torch.bool)
from ._dtype import complex64, complex128  # noqa: F401
from ._dtype import (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,  # noqa: F401
                     float8_e5m2fnuz, float8_e8m0fnu, uint16, uint32, uint64)
from ._repr import set_printoptions
from ._shape import Size, broadcast_shapes
from ._tensor import Tensor
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled,  # noqa: F401
                                    is_anomaly_enabled)
from .ops import *  # noqa: F401,F403
from .ops import _F, _I  # noqa: F401
from . import ops as _ops
from . import autograd, return_types  # noqa: F401
import importlib as _importlib  # noqa: E402

# the namespaces torch.linalg / torch.special / ... (ops/__init__'s __all__ keeps its own
# family modules, ops.linalg and ops.random among them, out of `from .ops import *`)
linalg = _importlib.import_module(".linalg", __name__)
special = _importlib.import_module(".special", __name__)
random = _importlib.import_module(".random", __name__)
signal = _importlib.import_module(".signal", __name__)
fft = _importlib.import_module(".fft", __name__)
from .signal.spectral_windows import *  # noqa: F401,F403,E402  (torch.hann_window, ...)
from . import nn, optim, utils  # noqa: F401,E402
from . import masked  # noqa: F401,E402  (torch.masked: written in public ops)
from . import sparse  # noqa: F401,E402  (torch.sparse: the COO layout)
from .sparse import sparse_coo_tensor, sparse_csr_tensor  # noqa: F401,E402
from .sparse._sspaddmm import hspmm, smm, sspaddmm  # noqa: F401,E402  (not in torch.sparse)
from .nn.functional import hardshrink, prelu  # noqa: F401,E402  (torch.hardshrink, torch.prelu)
from . import _pinned_memory  # noqa: F401,E402  (Tensor.pin_memory / is_pinned)
from ._layout import layout, sparse_coo, sparse_csr, strided  # noqa: F401,E402
from ._layout import (channels_last, channels_last_3d, contiguous_format,  # noqa: F401,E402
                      memory_format, preserve_format)
from .serialization import load, save  # noqa: F401,E402
from . import distributed  # noqa: F401,E402  (torch.distributed; mpi4py loads on first use)

globals().update({k: v for k, v in _ops._F.items()})
globals().update({k: v for k, v in _ops._I.items()})
abs = _ops.abs  # noqa: A001
sgn = _ops.sgn

from ._accelerator import DeviceModule as _DeviceModule  # noqa: E402
from ._accelerator import get_num_threads, set_num_threads  # noqa: E402,F401

cuda = _DeviceModule("cuda")
opencl = _DeviceModule("opencl")
# PyTorch's other device modules: no backend here provides them, so is_available() is False
xpu, mps, mtia = _DeviceModule("xpu"), _DeviceModule("mps"), _DeviceModule("mtia")

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128
import math as _math  # noqa: E402

nan, inf, pi, e, newaxis = _math.nan, _math.inf, _math.pi, _math.e, None  # torch.nan ...


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_inference(input) -> bool:
    """Whether `input` was made in inference mode (torch.is_inference)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def is_floating_point(input) -> bool:
    return input.dtype.is_floating_point


def is_complex(input) -> bool:
    return input.dtype.is_complex


def numel(input) -> int:
    return input.numel()


def typename(obj) -> str:
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


from ._dropin_names import attach as _attach_dropin_names  # noqa: E402

_attach_dropin_names(globals())      # torch.autocast, amp, accelerator, backends, FloatTensor ...

from ._torch_level import attach as _attach_torch_level  # noqa: E402

_attach_torch_level(globals())       # torch.conv2d, torch.layer_norm, torch.dropout, ... (ATen forms)

from ._compile import compile  # noqa: E402,A001  (torch.compile)
from . import _dynamo  # noqa: E402,F401


def __getattr__(name):
    # torch.export / .onnx / .distributions / .multiprocessing / .func / .testing / .jit /
    # .compiler / .profiler / .futures / .hub / .library, imported on first use
    if name in ("export", "onnx", "distributions", "multiprocessing", "func", "testing", "jit",
                "compiler", "profiler", "futures", "hub", "library"):
        return _importlib.import_module(f".{name}", __name__)
    if name == "Future":                # torch.Future is torch.futures.Future's base
        return _importlib.import_module(".futures", __name__).Future
    if name == "vmap":                  # torch.vmap is torch.func.vmap
        return _importlib.import_module(".func", __name__).vmap
    raise AttributeError(f"module 'dispatchtorch' has no attribute {name!r}")
