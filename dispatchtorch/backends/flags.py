"""torch.backends.cudnn / cuda / mps / mkldnn / mkl / openmp / opt_einsum / cpu: the
flags PyTorch programs set and the availability questions they ask.

The flags are kept and read back; none changes a result here: no backend has cuDNN,
TF32 or reduced-precision matmul reductions, so float32 matmuls are always computed
in float32 (what PyTorch does with the flags off). Availability answers the truth for
dispatchtorch: no cuDNN, no MPS backend unless one named "mps" is installed.
"""
from __future__ import annotations

import sys

from ..nn.attention._sdp_flags import SDP
from ._flags import FlagModule


def _false():
    return False


def _backend_ready(name):
    def is_available():
        from .._accelerator import DeviceModule
        return DeviceModule(name).is_available()
    return is_available


def _backend_installed(name):
    def is_built():
        from ..dispatch import available_names
        return name in available_names()
    return is_built


def _module(short, doc, flags=None, **functions):
    name = f"{__package__}.{short}"
    mod = FlagModule(name, doc, flags or {}, **functions)
    sys.modules[name] = mod
    return mod


cudnn = _module("cudnn", "cuDNN's flags (kept, no effect: no backend uses cuDNN).",
                dict(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                     benchmark_limit=None),
                is_available=_false, version=lambda: None)

_matmul = FlagModule(f"{__package__}.cuda.matmul", "cuBLAS matmul flags (kept, no effect).",
                     dict(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                          allow_bf16_reduced_precision_reduction=True,
                          allow_fp16_accumulation=False))
_sdp = SDP


def _sdp_functions():
    out = {}
    for kind in _sdp:
        out[f"{kind}_sdp_enabled"] = (lambda k: lambda: _sdp[k])(kind)
        out[f"enable_{kind}_sdp"] = (lambda k: lambda enabled: _sdp.__setitem__(k, bool(enabled)))(
            kind)
    return out


cuda = _module("cuda", "CUDA's flags (kept, no effect on results).", {},
               matmul=_matmul, is_built=_backend_installed("cuda"), **_sdp_functions())
mps = _module("mps", "Apple's Metal: there is no such backend unless one named 'mps' is "
                     "installed.", {},
              is_available=_backend_ready("mps"), is_built=_backend_installed("mps"))
mkldnn = _module("mkldnn", "oneDNN: not used by any backend here.", dict(enabled=True),
                 is_available=_false)
mkl = _module("mkl", "MKL: not used by any backend here.", {}, is_available=_false)
openmp = _module("openmp", "OpenMP: not used by any backend here.", {}, is_available=_false)
opt_einsum = _module("opt_einsum", "opt_einsum contraction-order search: einsum here "
                                   "contracts in the order written.", dict(enabled=False,
                                                                          strategy=None),
                     is_available=_false)
