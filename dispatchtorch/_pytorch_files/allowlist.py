"""What a PyTorch checkpoint may name: PyTorch's weights_only allowlist for state dicts
(torch/_weights_only_unpickler.py `_get_allowed_globals`), each global mapped to its
dispatchtorch counterpart, and the errors for everything else."""
from __future__ import annotations

import _codecs
import _compat_pickle
import collections
import pickle

from .. import _dtype as D
from .._device import device as Device
from .._shape import Size
from .._storage import _LEGACY_NAMES
from .._tensor import Tensor
from . import rebuild, sparse

# never allowed, whatever the user allowlists (as PyTorch's _blocklisted_modules)
BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# torch.FloatStorage, torch.cuda.FloatStorage (files of PyTorch < 1.12 name the cuda
# classes): the storage's dtype; torch.storage.UntypedStorage is bytes
STORAGE_DTYPES = {name: D.BY_NAME[dtype] for dtype, name in _LEGACY_NAMES.items()}


class StorageType:
    """What a torch.<X>Storage global becomes: only its dtype (as PyTorch's StorageType)."""

    def __init__(self, dtype):
        self.dtype = dtype


def canonical(module, name):
    """Python 2's names in Python 3's (torch.save's protocol 2), as PyTorch maps them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _encode(obj, encoding="utf-8", errors="strict"):
    """_codecs.encode as Python 2-protocol pickles of bytes use it: str to latin-1 bytes.
    Other codecs are refused (PyTorch allows any; none is needed for bytes)."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode is allowed only as pickle writes bytes "
                                     f"(a str with 'latin1'), got {type(obj).__name__} with "
                                     f"{encoding!r}")
    return _codecs.encode(obj, encoding, errors)


def _allowed():
    from ..nn.parameter import Parameter
    out = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": Device,
        "_codecs.encode": _encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.storage.UntypedStorage": StorageType(D.uint8),
        "torch._tensor._rebuild_from_type_v2": rebuild.rebuild_from_type_v2,
        "torch.serialization._get_layout": sparse._get_layout,
        "torch._utils._rebuild_sparse_tensor": sparse._rebuild_sparse_tensor,
    }
    for name, dt in D.BY_NAME.items():
        out[f"torch.{name}"] = dt
    for name, dt in STORAGE_DTYPES.items():
        out[f"torch.{name}"] = out[f"torch.cuda.{name}"] = StorageType(dt)
    for name in rebuild.REBUILDERS:
        out[f"torch._utils.{name}"] = rebuild.REBUILDERS[name]
    return out


_ALLOWED = []


def allowed():
    """{"module.name": object}: PyTorch's default allowlist, here."""
    if not _ALLOWED:
        _ALLOWED.append(_allowed())
    return _ALLOWED[0]


PREAMBLE = ("Weights only load failed. This file can still be loaded, to do so you have two "
            "options, do those steps only if you trust the source of the checkpoint.\n\t(1) In "
            "PyTorch 2.6, we changed the default value of the `weights_only` argument in "
            "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set "
            "to `False` will likely succeed, but it can result in arbitrary code execution. Do it "
            "only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: ")


def unsupported(full_path, module):
    """The UnpicklingError for a global outside the allowlist, naming it."""
    if module in BLOCKED_MODULES:
        return pickle.UnpicklingError(PREAMBLE + f"Trying to load unsupported GLOBAL {full_path} "
                                      f"whose module {module} is blocked.")
    if full_path.startswith("torch.") and full_path.split(".")[-1] in _PT_ONLY_DTYPES:
        return pickle.UnpicklingError(PREAMBLE + f"GLOBAL {full_path} is a PyTorch dtype that "
                                      f"dispatchtorch does not have.")
    if full_path.startswith("builtins."):       # PyTorch's message names builtins bare
        full_path = full_path[len("builtins."):]
    return pickle.UnpicklingError(
        PREAMBLE + f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        f"global if you trust this class/function.")


_PT_ONLY_DTYPES = {"qint8", "quint8", "qint32", "quint4x2", "quint2x4", "complex32", "chalf",
                   "QInt8Storage", "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage",
                   "QUInt2x4Storage", "ComplexHalfStorage"}
