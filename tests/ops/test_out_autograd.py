"""`out=` and autograd: PyTorch refuses an out= call in grad mode when a result would
need a graph (an input, or `out` itself, requires grad), since `out` cannot carry one;
before this rule dispatchtorch wrote the values and silently dropped the graph. The
message is PyTorch's (checked against torch 2.13 for add, sort, linear, gelu)."""
import pytest

import dispatchtorch as torch
import dispatchtorch.nn.functional as F

MSG = "functions with out=... arguments don't support automatic differentiation"

CALLS = {
    "add": lambda x, o: torch.add(x, 1, out=o),
    "sort": lambda x, o: torch.sort(x, out=(o, torch.empty(0, dtype=torch.int64))),
    "linear": lambda x, o: F.linear(x, torch.ones(3, 4), out=o),
    "gelu": lambda x, o: F.gelu(x, out=o),
    "softplus": lambda x, o: F.softplus(x, out=o),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_with_an_input_requiring_grad_raises_and_leaves_out(name):
    x = torch.tensor([[1.0, -2.0, 0.5, 3.0]], requires_grad=True)
    o = torch.full((2,), 7.0)
    with pytest.raises(RuntimeError, match=rf"^{name}\(\): {MSG}"):
        CALLS[name](x, o)
    assert o.tolist() == [7.0, 7.0]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_under_no_grad_is_written(name):
    x = torch.tensor([[1.0, -2.0, 0.5, 3.0]], requires_grad=True)
    o = torch.empty(0)
    with torch.no_grad():
        r = CALLS[name](x, o)
    assert (r[0] if isinstance(r, tuple) else r) is o
    assert not o.requires_grad and o.numel() > 0


def test_an_out_requiring_grad_raises():
    o = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^add\(\): {MSG}"):
        torch.add(torch.ones(3), 1, out=o)


def test_a_result_without_gradient_is_written():
    # a comparison has no derivative: PyTorch writes it whatever its input requires
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    o = torch.empty(0, dtype=torch.bool)
    assert torch.gt(x, 0, out=o) is o and o.tolist() == [True, False]
