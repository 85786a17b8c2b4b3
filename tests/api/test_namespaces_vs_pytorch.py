"""The small namespaces programs touch, against PyTorch: legacy tensor types,
Tensor.is_<device>, torch.backends flags, float32 matmul precision, torch.accelerator,
torch.cuda.amp / torch.cpu.amp as importable modules."""
from __future__ import annotations

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

LEGACY = ["DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
          "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types_match_pytorch(name):
    ours, theirs = getattr(dt, name), getattr(torch, name)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours(2, 3).shape) == tuple(theirs(2, 3).shape) == (2, 3)
    assert tuple(ours().shape) == tuple(theirs().shape) == (0,)
    assert tuple(ours(dt.Size([4])).shape) == (4,)
    data = [1, 0, 2]
    np.testing.assert_array_equal(ours(data).double().numpy(), theirs(data).double().numpy())
    t = ours(data)
    assert isinstance(t, ours) and not isinstance(t, dt.cuda.FloatTensor)
    other = "LongTensor" if name != "LongTensor" else "IntTensor"
    assert not isinstance(t, getattr(dt, other))
    assert isinstance(theirs(data), theirs) and not isinstance(theirs(data), getattr(torch, other))
    with pytest.raises(TypeError):
        ours(2, 3.5)
    with pytest.raises(TypeError):
        theirs(2, 3.5)


def test_type_accepts_legacy_types():
    x = dt.tensor([1.5, 2.5])
    assert x.type(dt.LongTensor).dtype is dt.int64
    assert x.type("torch.DoubleTensor").dtype is dt.float64
    assert x.type(dt.float16).dtype is dt.float16
    assert x.type(dt.FloatTensor) is x


def test_device_flags_and_backends_flags():
    x, tx = dt.zeros(1), torch.zeros(1)
    for flag in ("is_cuda", "is_xpu", "is_mps", "is_meta", "is_ipu", "is_hpu", "is_xla",
                 "is_mtia", "is_maia", "is_vulkan", "is_mkldnn", "is_nested", "is_sparse_csr"):
        assert getattr(x, flag) is False, flag
        assert getattr(tx, flag, False) is False, flag
    assert dt.zeros(1, device="meta").is_meta
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
        assert getattr(dt.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    dt.backends.cudnn.benchmark = True
    assert dt.backends.cudnn.benchmark is True
    dt.backends.cudnn.benchmark = False
    with dt.backends.cudnn.flags(enabled=False, deterministic=True):
        assert dt.backends.cudnn.deterministic and not dt.backends.cudnn.enabled
    assert dt.backends.cudnn.enabled and not dt.backends.cudnn.deterministic
    m, tm = dt.backends.cuda.matmul, torch.backends.cuda.matmul
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(m, name) == getattr(tm, name), name
    for mod, tmod in ((m, tm), (dt.backends.cudnn, torch.backends.cudnn)):
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            mod.foo = 1
    assert dt.backends.mps.is_available() is False and dt.backends.cudnn.is_available() is False
    assert dt.backends.cuda.flash_sdp_enabled() and dt.backends.cuda.math_sdp_enabled()


def test_float32_matmul_precision():
    assert dt.get_float32_matmul_precision() == "highest"
    dt.set_float32_matmul_precision("high")
    assert dt.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        dt.set_float32_matmul_precision("bad")
    dt.set_float32_matmul_precision("highest")


def test_accelerator_answers_for_the_installed_backends():
    from dispatchtorch.dispatch import available_names, get_backend
    ready = [n for n in available_names() if n not in ("cpu", "meta")
             and get_backend(n).status == "ready"]
    assert dt.accelerator.is_available() == bool(ready)
    acc = dt.accelerator.current_accelerator()
    if ready:
        assert acc.type == ("cuda" if "cuda" in ready else sorted(ready)[0])
        assert dt.accelerator.device_count() >= 1
        assert dt.accelerator.current_device_index() == 0
        with dt.accelerator.device_index(0):
            assert dt.accelerator.current_device_index() == 0
        with pytest.raises(ValueError, match="out of range"):
            dt.accelerator.set_device_index(99)
    else:
        assert acc is None and dt.accelerator.device_count() == 0


def test_amp_module_paths():
    import dispatchtorch.cpu.amp
    import dispatchtorch.cuda.amp
    from dispatchtorch.cuda.amp import GradScaler, autocast  # noqa: F401
    assert dispatchtorch.cuda.amp is dt.cuda.amp and dispatchtorch.cpu.amp is dt.cpu.amp
    assert dt.amp.is_autocast_available("cpu")
