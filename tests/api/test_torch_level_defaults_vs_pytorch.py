"""_torch_level/defaults.py against PyTorch: set_default_tensor_type's errors for what
is not a floating tensor type (PyTorch imports a dotted name, then refuses a non-type
object with one message), and the deprecated get_autocast_cpu_dtype /
get_autocast_gpu_dtype, which warn as PyTorch's."""
from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

BAD_TYPES = [1, None, float, "torch.float64", "torch.Tensor", "numpy.float64", "",
             "no_such_module_here", "torch.IntTensor", "torch.Tensor.foo"]


def _raised(lib, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            lib.set_default_tensor_type(t)
    return type(info.value), str(info.value).replace("dispatchtorch", "torch")


@pytest.mark.parametrize("t", BAD_TYPES, ids=[repr(t) for t in BAD_TYPES])
def test_set_default_tensor_type_refuses_as_pytorch(t):
    try:
        assert _raised(dt, t) == _raised(torch, t)
    finally:
        assert dt.get_default_dtype() is dt.float32 and torch.get_default_dtype() is torch.float32


def test_set_default_tensor_type_by_class_and_name():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for lib in (torch, dt):
                lib.set_default_tensor_type("torch.DoubleTensor")
                assert lib.tensor([1.0]).dtype is lib.float64
                lib.set_default_tensor_type(lib.FloatTensor)
                assert lib.tensor([1.0]).dtype is lib.float32
        finally:
            torch.set_default_dtype(torch.float32)
            dt.set_default_dtype(dt.float32)


@pytest.mark.parametrize("name,device", [("get_autocast_cpu_dtype", "cpu"),
                                         ("get_autocast_gpu_dtype", "cuda")])
def test_deprecated_autocast_dtype_getters_warn(name, device):
    for lib in (torch, dt):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = getattr(lib, name)()
        assert got is lib.get_autocast_dtype(device)
        messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
        assert any(m.startswith(f"torch.{name}() is deprecated. Please use "
                                f"torch.get_autocast_dtype('{device}') instead.")
                   for m in messages), messages
