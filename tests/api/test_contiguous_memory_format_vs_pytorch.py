"""Tensor.contiguous(memory_format=...) against PyTorch: the strides of the result
(channels_last gives NHWC strides), whether it is self, its contiguity in both senses,
its values and gradient, and the errors (wrong rank, preserve_format, not a format).
Also is_contiguous() of an empty tensor, which c10 calls contiguous whatever its strides."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

MAKERS = {
    "nchw": lambda L: L.arange(120.).reshape(2, 3, 4, 5),
    "transposed": lambda L: L.arange(120.).reshape(2, 3, 5, 4).transpose(2, 3),
    "size1_channel": lambda L: L.arange(32.).reshape(2, 1, 4, 4).transpose(2, 3),
    "empty": lambda L: L.ones(0, 3, 2, 2),
    "already_channels_last": lambda L: L.ones(2, 3, 1, 1),
    "ncdhw": lambda L: L.arange(240.).reshape(2, 3, 2, 4, 5),
    "rank3": lambda L: L.ones(2, 3, 4),
}
FORMATS = ["channels_last", "channels_last_3d", "preserve_format", "contiguous_format"]


def _outcome(lib, make, fmt):
    x = make(lib)
    try:
        y = x.contiguous(memory_format=getattr(lib, fmt))
    except Exception as e:        # noqa: BLE001  (compared below, class and message)
        return type(e), str(e)
    return (tuple(y.stride()), y is x, y.is_contiguous(),
            y.is_contiguous(memory_format=getattr(lib, fmt)), np.asarray(y.tolist()).tolist())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", list(MAKERS))
def test_contiguous_in_a_memory_format(kind, fmt):
    assert _outcome(dt, MAKERS[kind], fmt) == _outcome(torch, MAKERS[kind], fmt)


def test_channels_last_copy_is_nhwc_and_differentiable():
    x = dt.ones(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=dt.channels_last)
    assert y.stride() == (60, 1, 15, 3) and y.permute(0, 2, 3, 1).is_contiguous()
    w = dt.arange(120.).reshape(2, 3, 4, 5)
    (y * w).sum().backward()
    assert np.array_equal(x.grad.numpy(), w.numpy())


def test_not_a_memory_format():
    for lib in (torch, dt):
        with pytest.raises(TypeError, match="argument 'memory_format' must be torch.memory_format, "
                                            "not int"):
            lib.ones(2, 3, 4, 5).contiguous(memory_format=1)


def test_empty_tensor_is_contiguous_whatever_its_strides():
    for lib in (torch, dt):
        assert lib.ones(3, 0, 4).transpose(0, 2).is_contiguous()
        assert lib.ones(0, 3, 2, 2).as_strided((0, 3, 2, 2), (1, 1, 1, 1)).is_contiguous()


CLONE_TO = {
    "clone_channels_last": lambda L, x: x.clone(memory_format=L.channels_last),
    "torch_clone_channels_last": lambda L, x: L.clone(x, memory_format=L.channels_last),
    "clone_contiguous": lambda L, x: x.contiguous(memory_format=L.channels_last).clone(
        memory_format=L.contiguous_format),
    "to_channels_last": lambda L, x: x.to(memory_format=L.channels_last),
    "to_dtype_channels_last": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "to_device_channels_last": lambda L, x: x.to("cpu", memory_format=L.channels_last),
    "to_back_to_contiguous": lambda L, x: x.contiguous(memory_format=L.channels_last).to(
        memory_format=L.contiguous_format),
    "clone_3d_rank": lambda L, x: x.clone(memory_format=L.channels_last_3d),
    "to_rank": lambda L, x: x[0].to(memory_format=L.channels_last),
    "clone_not_a_format": lambda L, x: x.clone(memory_format=1),
}


@pytest.mark.parametrize("name", list(CLONE_TO))
def test_clone_and_to_in_a_memory_format(name):
    def outcome(lib):
        x = lib.arange(24.0).reshape(2, 3, 2, 2)
        try:
            y = CLONE_TO[name](lib, x)
        except Exception as e:        # noqa: BLE001
            return type(e), str(e)
        return tuple(y.stride()), str(y.dtype).split(".")[-1], y.tolist()
    assert outcome(dt) == outcome(torch)


def test_to_channels_last_is_self_when_already_so():
    for lib in (torch, dt):
        y = lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        assert y.to(memory_format=lib.channels_last) is y
        assert y.to(lib.float32, memory_format=lib.preserve_format) is y
