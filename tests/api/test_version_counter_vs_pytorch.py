"""Tensor._version reads as PyTorch's: an int, bumped by each in-place write, shared by
views and detach(), read-only; autograd's saved-tensor check keeps working on it."""
import pytest
import torch

import dispatchtorch as dt


def _both(program):
    got, want = program(dt), program(torch)
    assert got == want
    return got


def test_fresh_tensor_is_at_version_zero_as_an_int():
    def run(lib):
        t = lib.zeros(3)
        return type(t._version).__name__, t._version
    assert _both(run) == ("int", 0)


def test_each_inplace_op_bumps_once():
    def run(lib):
        t = lib.zeros(2, 3)
        seen = [t._version]
        t.add_(1)
        seen.append(t._version)
        t.mul_(2.0)
        seen.append(t._version)
        t[0] = 5.0
        seen.append(t._version)
        t.copy_(lib.ones(2, 3))
        seen.append(t._version)
        t.zero_()
        seen.append(t._version)
        lib.add(t, 1, out=t)
        seen.append(t._version)
        t + 1                           # functional ops leave it alone
        t.sum()
        seen.append(t._version)
        return seen
    assert _both(run)[-1] > 0


def test_views_and_detach_share_the_counter():
    def run(lib):
        t = lib.zeros(4, 4)
        v = t[1:3]
        w = v.t()
        d = t.detach()
        seen = [(t._version, v._version, w._version, d._version)]
        w.add_(1)
        seen.append((t._version, v._version, w._version, d._version))
        d.mul_(3)
        seen.append((t._version, v._version, w._version, d._version))
        later = t.view(16)               # a view made later starts at the base's number
        seen.append(later._version)
        fresh = t.clone()                # a copy has a counter of its own
        fresh.add_(1)
        seen.append((fresh._version, t._version))
        return seen
    assert _both(run)[2] == (2, 2, 2, 2)


def test_data_has_a_counter_of_its_own():
    def run(lib):
        t = lib.zeros(4)
        t.add_(1)
        d = t.data
        seen = [(t._version, d._version)]
        d.add_(1)
        d[1:3].mul_(2)                    # views of .data share .data's counter
        seen.append((t._version, d._version, t.tolist()))
        t.add_(1)
        seen.append((t._version, d._version))
        return seen
    assert _both(run)[0] == (1, 0)


def test_inplace_write_through_data_is_not_refused_by_backward():
    """Old-style optimizers and weight surgery write through `.data`; PyTorch's backward
    then uses the written values without complaint."""
    def run(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (w * w).sum()
        w.data.mul_(0.5)
        y.backward()
        return w.grad.tolist()
    assert _both(run) == [1.0, 2.0, 3.0]


def test_version_is_read_only():
    for lib in (dt, torch):
        t = lib.zeros(2)
        with pytest.raises(AttributeError):
            t._version = 3
        assert t._version == 0


def test_saved_tensor_modified_inplace_is_refused():
    def run(lib):
        a = lib.ones(3, requires_grad=True)
        b = a * 1
        c = b.sin()                      # saves b
        b.detach().mul_(2)               # through a detach(): the same counter
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            c.sum().backward()
        return "is at version 1; expected version 0" in str(e.value), b._version
    assert _both(run) == (True, 1)


def test_saved_tensor_modified_through_a_view_is_refused():
    def run(lib):
        a = lib.ones(4, requires_grad=True)
        b = a * 2
        c = b.exp()                      # saves its output
        c[:2].add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()
        return c._version
    assert _both(run) == 1


def test_custom_function_saved_tensor_check():
    def run(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = lib.ones(3, requires_grad=True)
        y = x * 1
        z = Square.apply(y)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        return y._version
    assert _both(run) == 1
