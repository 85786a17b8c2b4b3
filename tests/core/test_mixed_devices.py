"""An op mixing devices raises PyTorch's RuntimeError ("Expected all tensors to be on the
same device, ...") and leaves its tensors as they were: the nn rows with a kernel of
their own (nll_loss / cross_entropy with a cpu weight or target, linear, conv, norms)
used to raise the backend's internal BackendError, and index_add_ / index_copy_ / put_
copied a cpu index or source over. What PyTorch allows stays allowed: cpu index
tensors in subscripts, copy_ between devices, 0-d cpu tensors in elementwise ops."""
import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.opencl.is_available(), reason="no OpenCL device")
MIXED = "Expected all tensors to be on the same device, but found at least two devices"

CASES = {
    "nll_loss weight": lambda x, t: F.nll_loss(x, t, weight=torch.tensor([1.0, 2.0, 3.0])),
    "cross_entropy weight": lambda x, t: F.cross_entropy(x, t, weight=torch.ones(3)),
    "cross_entropy target": lambda x, t: F.cross_entropy(x, t.cpu()),
    "cross_entropy probabilities": lambda x, t: F.cross_entropy(x, torch.ones(4, 3) / 3),
    "nll_loss target": lambda x, t: F.nll_loss(x, t.cpu()),
    "linear weight": lambda x, t: F.linear(x, torch.ones(2, 3)),
    "linear bias": lambda x, t: F.linear(x, torch.ones(2, 3, device="opencl"), torch.ones(2)),
    "layer_norm weight": lambda x, t: F.layer_norm(x, (3,), torch.ones(3, device="opencl"),
                                                   torch.zeros(3)),
    "conv2d bias": lambda x, t: F.conv2d(torch.ones(1, 3, 4, 4, device="opencl"),
                                         torch.ones(2, 3, 2, 2, device="opencl"), torch.ones(2)),
    "group_norm weight": lambda x, t: F.group_norm(torch.ones(1, 3, 4, 4, device="opencl"), 1,
                                                   torch.ones(3)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_nn_ops_refuse_a_cpu_operand(case):
    x = torch.randn(4, 3, device="opencl", requires_grad=True)
    t = torch.tensor([0, 1, 2, 1], device="opencl")
    with pytest.raises(RuntimeError, match=MIXED):
        CASES[case](x, t)


INPLACE = {
    "index_add_ index": lambda x: x.index_add_(0, torch.tensor([0, 1]),
                                               torch.ones(2, 3, device="opencl")),
    "index_add_ source": lambda x: x.index_add_(0, torch.tensor([0, 1], device="opencl"),
                                                torch.ones(2, 3)),
    "index_add": lambda x: torch.index_add(x, 0, torch.tensor([0, 1]),
                                           torch.ones(2, 3, device="opencl")),
    "index_copy_": lambda x: x.index_copy_(0, torch.tensor([0, 1]),
                                           torch.ones(2, 3, device="opencl")),
    "put_": lambda x: x.put_(torch.tensor([0, 1]), torch.ones(2, device="opencl")),
    "put_ source": lambda x: x.put_(torch.tensor([0, 1], device="opencl"), torch.ones(2)),
}


@pytest.mark.parametrize("case", sorted(INPLACE))
def test_index_writes_refuse_a_cpu_operand_and_leave_self_alone(case):
    x = torch.arange(12.0, device="opencl").reshape(4, 3)
    with pytest.raises(RuntimeError, match=MIXED):
        INPLACE[case](x)
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(12.0).reshape(4, 3))


def test_what_pytorch_allows_across_devices_still_works():
    x = torch.arange(12.0, device="opencl").reshape(4, 3)
    np.testing.assert_array_equal(x[torch.tensor([2, 0])].cpu().numpy(), [[6, 7, 8], [0, 1, 2]])
    y = x.clone()
    y[torch.tensor([0])] = 5.0
    y.copy_(torch.ones(4, 3))
    np.testing.assert_array_equal(y.cpu().numpy(), np.ones((4, 3)))
    np.testing.assert_array_equal((x * torch.tensor(2.0)).cpu().numpy(),
                                  np.arange(0, 24.0, 2).reshape(4, 3))
