"""Tensors, factories, views, indexing and in-place ops against numpy."""
import numpy as np
import pytest

import dispatchtorch as torch

RNG = np.random.default_rng(7)


def test_factories():
    assert torch.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert torch.ones((2,), dtype=torch.int32).dtype is torch.int32
    assert torch.full((2, 2), 7).dtype is torch.int64
    assert torch.full((1,), 2.5).dtype is torch.float32
    assert torch.full((1,), True).dtype is torch.bool
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert torch.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert torch.arange(0, 1, 0.1).shape == (10,)
    np.testing.assert_allclose(torch.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5))
    assert torch.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert torch.tensor([[1, 2], [3, 4]]).dtype is torch.int64
    assert torch.tensor([1, 2.0]).dtype is torch.float32
    assert torch.tensor(np.array([1.0])).dtype is torch.float64
    assert torch.tensor(3.5).shape == () and torch.tensor([]).shape == (0,)
    assert torch.empty(0, 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.zeros(-1)
    with pytest.raises(ValueError, match="irregular shape"):
        torch.tensor([[1, 2], [3]])


def test_random_is_seeded_and_shaped():
    torch.manual_seed(3)
    a = torch.randn(4, 5)
    torch.manual_seed(3)
    b = torch.randn(4, 5)
    assert a.tolist() == b.tolist()
    g = torch.Generator().manual_seed(3)
    assert torch.rand(3, generator=g).shape == (3,)
    r = torch.randint(0, 10, (1000,))
    assert r.dtype is torch.int64 and 0 <= r.min().item() and r.max().item() < 10
    p = torch.randperm(10)
    assert sorted(p.tolist()) == list(range(10))
    u = torch.rand(10000)
    assert 0.45 < u.mean().item() < 0.55


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(a)
    t[0, 0] = 100.0
    assert a[0, 0] == 100.0
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    assert t.numpy() is not None and np.shares_memory(t.numpy(), a)


def test_views_alias_and_geometry():
    x = torch.arange(24.0).reshape(2, 3, 4)
    xn = np.arange(24.0).reshape(2, 3, 4)
    cases = {
        "transpose": (x.transpose(0, 2), xn.transpose(2, 1, 0)),
        "permute": (x.permute(1, 2, 0), xn.transpose(1, 2, 0)),
        "slice": (x[:, 1:, ::2], xn[:, 1:, ::2]),
        "select": (x[1, :, 2], xn[1, :, 2]),
        "ellipsis": (x[..., 1], xn[..., 1]),
        "none": (x[None, :, None, 1], xn[None, :, None, 1]),
        "unsqueeze": (x.unsqueeze(-1), xn[..., None]),
        "narrow": (x.narrow(2, 1, 2), xn[:, :, 1:3]),
        "expand": (x[:, :1].expand(2, 5, 4), np.broadcast_to(xn[:, :1], (2, 5, 4))),
        "diagonal": (x.diagonal(0, 1, 2), np.diagonal(xn, 0, 1, 2)),
        "unfold": (x.unfold(2, 2, 1), np.lib.stride_tricks.sliding_window_view(xn, 2, axis=2)),
        "T": (x[0].T, xn[0].T),
    }
    for name, (view, expected) in cases.items():
        np.testing.assert_array_equal(view.numpy(), expected, err_msg=name)
        assert view.untyped_storage_id() == x.untyped_storage_id(), name
    v = x[:, 1]
    v.mul_(10)
    assert x[1, 1, 3].item() == 190.0


def test_reshape_views_when_possible_and_copies_otherwise():
    x = torch.arange(12.0).reshape(3, 4)
    assert x.reshape(4, 3).untyped_storage_id() == x.untyped_storage_id()
    t = x.T
    assert not t.is_contiguous()
    r = t.reshape(12)
    assert r.untyped_storage_id() != x.untyped_storage_id()
    np.testing.assert_array_equal(r.numpy(), np.arange(12.0).reshape(3, 4).T.reshape(12))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(12)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        x.view(5, -1)
    assert x.view(-1, 6).shape == (2, 6)


def test_advanced_indexing_matches_numpy():
    xn = RNG.standard_normal((4, 5, 6))
    x = torch.tensor(xn)
    i = np.array([0, 2, 3])
    j = np.array([[1], [4]])
    cases = [
        (x[torch.tensor(i)], xn[i]),
        (x[:, torch.tensor(i)], xn[:, i]),
        (x[torch.tensor(i), :, torch.tensor([1, 2, 5])], xn[i, :, [1, 2, 5]]),
        (x[1:, torch.tensor(j), 2], xn[1:, j, 2]),
        (x[torch.tensor(j - 1), torch.tensor(i)], xn[j - 1, i]),
        (x[[0, -1]], xn[[0, -1]]),
        (x[x > 0.5], xn[xn > 0.5]),
        (x[torch.tensor(xn[:, 0, 0] > 0)], xn[xn[:, 0, 0] > 0]),
        (x[..., torch.tensor([0, 0])], xn[..., [0, 0]]),
    ]
    for k, (got, expected) in enumerate(cases):
        assert got.shape == expected.shape, k
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=str(k))
    with pytest.raises(IndexError, match="out of bounds"):
        x[torch.tensor([4])]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 4"):
        x[5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]


def test_setitem_basic_and_advanced():
    xn = np.zeros((3, 4))
    x = torch.zeros(3, 4, dtype=torch.float64)
    for key, value in [((0,), 1.0), ((slice(None), 1), 2.0), ((slice(1, None), slice(None, None, 2)), 3.0)]:
        x[key] = value
        xn[key] = value
    x[torch.tensor([0, 2]), torch.tensor([3, 3])] = torch.tensor([7.0, 8.0], dtype=torch.float64)
    xn[[0, 2], [3, 3]] = [7.0, 8.0]
    x[x > 2.5] = -1.0
    xn[xn > 2.5] = -1.0
    x[1] = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    xn[1] = [1, 2, 3, 4]
    np.testing.assert_array_equal(x.numpy(), xn)
    t = torch.zeros(4, 4)[:, 1]          # setitem through a non-contiguous view
    t[torch.tensor([0, 3])] = 5.0
    assert t.tolist() == [5.0, 0.0, 0.0, 5.0]


def test_index_put_accumulates_duplicates():
    x = torch.zeros(3)
    x.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert x.tolist() == [3.0, 0.0, 3.0]


def test_reductions_match_numpy():
    xn = RNG.standard_normal((3, 4, 5))
    x = torch.tensor(xn)
    np.testing.assert_allclose(x.sum().item(), xn.sum())
    np.testing.assert_allclose(x.sum(dim=(0, 2)).numpy(), xn.sum(axis=(0, 2)))
    np.testing.assert_allclose(x.mean(-1, keepdim=True).numpy(), xn.mean(-1, keepdims=True))
    np.testing.assert_array_equal(x.amax(1).numpy(), xn.max(1))
    np.testing.assert_array_equal(x.amin((0, 1)).numpy(), xn.min((0, 1)))
    np.testing.assert_array_equal(x.argmax(2).numpy(), xn.argmax(2))
    np.testing.assert_array_equal(x.argmin().numpy(), xn.argmin())
    values, indices = x.max(dim=1)
    np.testing.assert_array_equal(values.numpy(), xn.max(1))
    np.testing.assert_array_equal(indices.numpy(), xn.argmax(1))
    assert torch.tensor([1, 2], dtype=torch.int32).sum().dtype is torch.int64
    assert torch.tensor([True, True]).sum().item() == 2
    assert torch.zeros(0).sum().item() == 0.0
    with pytest.raises(RuntimeError, match="mean.*Long"):
        torch.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError, match="numel\\(\\) == 0"):
        torch.zeros(0).max()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(3)
    assert torch.tensor([3.0, 1.0, 3.0]).argmax().item() == 0        # first index on ties
    assert torch.tensor([1.0, float("nan"), 2.0]).amax().isnan().item()
    assert torch.tensor([[True, False]]).any(1).tolist() == [True]
    assert torch.tensor([[True, False]]).all().item() is False


def test_matmul_cases_match_numpy():
    shapes = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
              ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (3, 3, 2))]
    for sa, sb in shapes:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        out = torch.tensor(a) @ torch.tensor(b)
        np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12, err_msg=f"{sa} @ {sb}")
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.ones(2, 3) @ torch.ones(4, 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)


def test_cat_stack_split():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 3))
    np.testing.assert_array_equal(torch.cat([torch.tensor(a), torch.tensor(b)]).numpy(),
                                  np.concatenate([a, b]))
    np.testing.assert_array_equal(torch.stack([torch.tensor(a)] * 3, 1).numpy(),
                                  np.stack([a] * 3, 1))
    assert [t.shape[0] for t in torch.tensor(b).split(3)] == [3, 1]
    assert [t.shape[1] for t in torch.ones(2, 7).chunk(3, 1)] == [3, 3, 1]
    assert torch.cat([torch.ones(2, dtype=torch.int32), torch.ones(1)]).dtype is torch.float32
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([torch.ones(2, 3), torch.ones(2, 4)])


def test_to_and_casts():
    x = torch.tensor([1.7, -1.7, 0.0])
    assert x.to(torch.int32).tolist() == [1, -1, 0]
    assert x.bool().tolist() == [True, True, False]
    assert x.to("cpu") is x and x.to(torch.float32) is x
    assert x.double().dtype is torch.float64
    assert x.to(torch.float64, copy=True) is not x
    with pytest.raises(TypeError, match="unknown dtype"):
        x.to(dtype="float128")


def test_bad_inputs_leave_tensors_untouched():
    a = torch.ones(2, 3)
    b = torch.ones(4)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
        a.add_(b)
    assert a.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.ones(3).add_(torch.ones(2, 3))
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(RuntimeError, match="Invalid device string: 'cpu::'"):
        torch.zeros(1, device="cpu::")


def test_repr_like_pytorch():
    assert repr(torch.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(torch.tensor(3.0)) == "tensor(3.)"
    assert repr(torch.tensor([1, 2], dtype=torch.int32)) == "tensor([1, 2], dtype=dispatchtorch.int32)"
    assert repr(torch.ones(1, requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(torch.tensor([True])) == "tensor([True])"


def test_dlpack_and_array_protocol():
    t = torch.arange(4.0)
    a = np.from_dlpack(t)
    a[0] = 9.0
    assert t[0].item() == 9.0
    assert np.asarray(t).tolist() == [9.0, 1.0, 2.0, 3.0]
    back = torch.from_dlpack(np.arange(3.0))
    assert back.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int16, torch.bool])
def test_data_ptr_of_a_view_is_its_storages_plus_its_offset_in_bytes(dtype):
    # as PyTorch's: x[2:].data_ptr() - x.data_ptr() == 2 * x.element_size()
    x = torch.zeros(4, 6, dtype=dtype)
    item = x.element_size()
    assert x[2:].data_ptr() - x.data_ptr() == 2 * 6 * item
    assert x[1, 3:].data_ptr() - x.data_ptr() == (6 + 3) * item
    assert x.t()[2].data_ptr() - x.data_ptr() == 2 * item
    assert x.view(-1)[5:].data_ptr() - x.data_ptr() == 5 * item


def test_data_ptr_on_the_cpu_is_the_memorys_address():
    x = torch.arange(12.0).view(3, 4)
    assert x.data_ptr() == x.numpy().ctypes.data
    assert x[1:, 2:].data_ptr() == x.numpy()[1:, 2:].ctypes.data
    assert torch.empty(0).data_ptr() == 0                      # as PyTorch's: nothing allocated


def test_data_ptr_of_views_never_equals_another_live_storages():
    # the default for devices without host-visible addresses spaces storages 2**32 apart
    from dispatchtorch.backend.contract import Backend
    a, b = np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32)
    base_a, base_b = Backend.data_ptr(None, a), Backend.data_ptr(None, b)
    assert abs(base_a - base_b) >= 1 << 32
