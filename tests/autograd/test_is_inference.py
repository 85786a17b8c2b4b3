"""Tensor.is_inference: tensors made in inference_mode are inference tensors (views
ask their base), and autograd and in-place writes outside the mode refuse them, with
PyTorch's messages."""
from __future__ import annotations

import threading

import pytest

import dispatchtorch as dt

try:
    import torch
    TORCH = torch if torch.__version__.startswith("2.13") else None
except ImportError:
    TORCH = None


def _flags(m):
    with m.inference_mode():
        x = m.ones(3)
        v = x[:2]
    y = m.ones(3)
    with m.inference_mode():
        yv, z, s, e = y[:2], y * 2, y.sum(), m.exp(y)
        with m.inference_mode(False):
            inner = (m.ones(1).is_inference(), m.is_inference_mode_enabled(), m.is_grad_enabled())
    with m.no_grad():
        ng = m.ones(1)

    @m.inference_mode()
    def made():
        return m.zeros(2)
    return [x.is_inference(), v.is_inference(), yv.is_inference(), z.is_inference(),
            y.is_inference(), x[:1].is_inference(), m.is_inference(x), s.is_inference(),
            e.is_inference(), inner, ng.is_inference(), made().is_inference(),
            m.is_inference_mode_enabled()]


EXPECTED = [True, True, False, True, False, True, True, True, True, (False, False, True),
            False, True, False]


def test_flags_hand_values():
    assert _flags(dt) == EXPECTED


def test_autograd_refuses_saving_an_inference_tensor():
    with dt.inference_mode():
        x = dt.ones(3)
    w = dt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Inference tensors cannot be saved for backward. "):
        x * w
    assert (x + w).requires_grad          # add saves nothing: allowed, as in PyTorch
    y = x.clone()                         # a clone made outside is a normal tensor
    assert not y.is_inference() and (y * w).requires_grad


def test_inplace_outside_inference_mode_refuses():
    with dt.inference_mode():
        x = dt.ones(3)
        x.add_(1)                         # inside: allowed
    with pytest.raises(RuntimeError, match="^Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x[:2].mul_(2)
    with dt.inference_mode():
        x.mul_(2)
    assert x.tolist() == [4.0, 4.0, 4.0]


def test_inference_mode_is_per_thread():
    made = []
    inside, leave = threading.Event(), threading.Event()

    def other():
        with dt.inference_mode():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(5)
    made.append(dt.ones(2))               # this thread is not in inference mode
    leave.set()
    t.join()
    assert not made[0].is_inference()


def test_is_inference_needs_a_tensor():
    with pytest.raises(TypeError, match=r"is_inference\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not int"):
        dt.is_inference(3)


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
def test_matches_pytorch():
    assert _flags(dt) == _flags(TORCH)
    msgs = []
    for m in (dt, TORCH):
        with m.inference_mode():
            x = m.ones(3)
        row = []
        for call in (lambda: x * m.ones(3, requires_grad=True), lambda: x.add_(1)):
            try:
                call()
                row.append(None)
            except RuntimeError as exc:
                row.append(str(exc))
        msgs.append(row)
    assert msgs[0] == msgs[1]
