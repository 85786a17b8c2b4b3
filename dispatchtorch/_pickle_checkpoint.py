"""Reading the whole-object checkpoints (a Module, an Optimizer, anything picklable) that
earlier dispatchtorch versions wrote beside their safetensors format; `save` now writes
PyTorch's format instead (_pytorch_files/saving.py).

The file is a magic line then a pickle. torch.load reads it only with
weights_only=False (it can run code), as PyTorch 2.6+; with weights_only=True (the
default) an unpickler restricted to tensors, numbers, containers and the globals in
torch.serialization's allowlist refuses anything else, naming it.
"""
from __future__ import annotations

import io
import pickle

from . import _safe_globals
from ._map_location import map_device

MAGIC = b"DISPATCHTORCH-PICKLE-1\n"

# the globals Tensor.__reduce_ex__ pickles tensors and parameters with: named, not
# imported (serialization, which defines them, is the layer above this helper)
_REBUILDERS = frozenset({("dispatchtorch.serialization", "_rebuild_tensor"),
                         ("dispatchtorch.serialization", "_rebuild_parameter")})
# what a weights-only load may construct without the user's say-so: our tensor and
# parameter rebuilders, numpy's array reconstruction, plain containers
_ALLOWED = {
    *_REBUILDERS,
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"),
    ("builtins", "complex"), ("builtins", "slice"), ("builtins", "bytearray"),
    ("dispatchtorch._dtype", "dtype"), ("dispatchtorch._device", "device"),
    ("torch._utils", "_rebuild_tensor_v2"),
    # sparse tensors: rebuilt from their (dense, allowlisted) parts by the sparse module
    ("dispatchtorch.sparse._build", "rebuild_coo"), ("dispatchtorch.sparse._csr", "rebuild_csr"),
}
_ALLOWED_MODULE_PREFIXES = ("numpy.dtypes", "ml_dtypes")


def is_pickle_checkpoint(data):
    return data[:len(MAGIC)] == MAGIC


class WeightsOnlyUnpickler(pickle.Unpickler):
    def __init__(self, file, map_location):
        super().__init__(file)
        self._map_location = map_location

    def find_class(self, module, name):
        key = f"{module}.{name}"
        allowed = _safe_globals.user_allowed()
        if key in allowed:
            return allowed[key]
        if (module, name) in _ALLOWED or module.startswith(_ALLOWED_MODULE_PREFIXES):
            return _mapped(super().find_class(module, name), (module, name), self._map_location)
        raise pickle.UnpicklingError(_refusal(key))


class _FullUnpickler(pickle.Unpickler):
    def __init__(self, file, map_location):
        super().__init__(file)
        self._map_location = map_location

    def find_class(self, module, name):
        return _mapped(super().find_class(module, name), (module, name), self._map_location)


def _mapped(fn, key, map_location):
    """Our tensor rebuilders (key: the global's (module, name)), with map_location
    applied to the saved device."""
    if map_location is None or key not in _REBUILDERS:
        return fn

    def rebuild(array, device, requires_grad):
        target = map_device(device, map_location)
        if target is None:                       # a callable
            t = fn(array, "cpu", requires_grad)
            r = map_location(t, device)
            return r if r is not None else t
        return fn(array, target, requires_grad)
    return rebuild


def _refusal(key):
    return ("Weights only load failed. This file can still be loaded, to do so you have two "
            "options, do those steps only if you trust the source of the checkpoint.\n\t(1) "
            "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
            "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
            "set to `False` will likely succeed, but it can result in arbitrary code execution. "
            "Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load "
            "with `weights_only=True` please check the recommended steps in the following error "
            f"message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {key} was not an "
            f"allowed global by default. Please use `torch.serialization.add_safe_globals"
            f"([{key}])` or the `torch.serialization.safe_globals([{key}])` context manager to "
            f"allowlist this global if you trust this class/function.")


def load(data, name, map_location=None, weights_only=True, pickle_module=None):
    stream = io.BytesIO(data[len(MAGIC):])
    if weights_only:
        return WeightsOnlyUnpickler(stream, map_location).load()
    if pickle_module is not None and pickle_module is not pickle:
        return pickle_module.load(stream)
    return _FullUnpickler(stream, map_location).load()


class _Placeholder:
    """What a refused global becomes while listing them: inert, accepts anything."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __call__(self, *args, **kwargs):
        return _Placeholder()


class _ListingUnpickler(WeightsOnlyUnpickler):
    def __init__(self, file):
        super().__init__(file, None)
        self.refused = []

    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except pickle.UnpicklingError:
            key = f"{module}.{name}"
            if key not in self.refused:
                self.refused.append(key)
            return _Placeholder


def unsafe_globals(data):
    """The "module.name" globals in the pickle that a weights-only load refuses."""
    u = _ListingUnpickler(io.BytesIO(data[len(MAGIC):]))
    try:
        u.load()
    except Exception:       # a placeholder in a place that needs a real object: enough seen
        pass
    return u.refused
