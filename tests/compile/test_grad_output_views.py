"""The compiled backward takes its output's gradient as the engine hands it: a
contiguous view at offset 0 (reshape's backward: a loss on out.reshape(-1, C)) is
bound as it is, a transposed or offset one is copied first; the gradients equal
eager's either way, on cpu and OpenCL."""
import numpy as np
import pytest

import dispatchtorch as torch
from tests.compile.compile_helpers import DEVICES, _np

LOSSES = {
    "reshape": lambda out: (out.reshape(-1, 2) * torch.arange(12.0, device=out.device).reshape(6, 2)).sum(),
    "transpose": lambda out: (out.t() * torch.arange(12.0, device=out.device).reshape(3, 4)).sum(),
    "offset": lambda out: (torch.cat([out.new_zeros(1, 3), out])[1:] * 3.0).square().sum(),
}


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradients_through_a_view_of_the_output_equal_eager(dev, loss):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh()).to(dev)
    cm = torch.compile(m)
    x = torch.randn(4, 5, device=dev)
    got = []
    for model in (m, cm, cm):
        m.zero_grad()
        LOSSES[loss](model(x)).backward()
        got.append([_np(p.grad).copy() for p in m.parameters()])
    for a, b in zip(got[0], got[2]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
