"""Results keep their inputs' memory layout as PyTorch 2.13 lays them out: elementwise ops
(TensorIterator's dimension order, fast setup and tie-breaking), clone / dtype casts /
`*_like` with preserve_format (empty_like's rule), and channels_last results of the image
ops. Every case builds the same tensor in both libraries by the same view calls and
compares strides and values with real PyTorch (skipped without it); the pure rules are
also checked against PyTorch over random layouts."""
import random

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch._output_strides import iterator_strides, preserve_strides, suggested_format

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)


def _np(shape):
    return _RNG.standard_normal(shape).astype(np.float32)


# name -> (numpy base, view built the same way in either library)
LAYOUTS = {
    "contiguous": (lambda: _np((2, 3, 4, 5)), lambda L, x: x),
    "transposed_2d": (lambda: _np((3, 4)), lambda L, x: x.t()),
    "permuted_4d": (lambda: _np((2, 3, 4, 5)), lambda L, x: x.permute(2, 0, 3, 1)),
    "channels_last": (lambda: _np((2, 3, 4, 5)),
                      lambda L, x: x.contiguous(memory_format=L.channels_last)),
    "sliced_not_dense": (lambda: _np((4, 6, 5)), lambda L, x: x.transpose(0, 2)[:, ::2]),
    "expanded": (lambda: _np((3, 1)), lambda L, x: x.expand(3, 4)),
    "overlapping": (lambda: _np((20,)), lambda L, x: x.as_strided((3, 4), (1, 2))),
    "size1_permuted": (lambda: _np((2, 1, 3, 1)), lambda L, x: x.permute(3, 2, 1, 0)),
    "n111_channels_last": (lambda: _np((4, 1, 1, 1)),
                           lambda L, x: x.contiguous(memory_format=L.channels_last)),
    "one_c_one_w": (lambda: _np((1, 3, 1, 4)), lambda L, x: x.transpose(1, 3)),
    "zero_d": (lambda: np.float32(1.5), lambda L, x: x),
    "empty_transposed": (lambda: _np((0, 3)), lambda L, x: L.zeros(0, 3).t()),
}


def _both(name, device="cpu"):
    base, view = LAYOUTS[name]
    a = base()
    return view(torch, torch.tensor(a)), view(dt, dt.tensor(a, device=device))


def _same(got, want, tol=1e-6):
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=tol,
                               atol=tol)


def _devices():
    return ["cpu", pytest.param("opencl", marks=pytest.mark.skipif(
        not dt.opencl.is_available(), reason="no OpenCL device"))]


UNARY = {"exp": lambda L, x: L.exp(x), "neg": lambda L, x: -x, "relu": lambda L, x: L.relu(x),
         "abs": lambda L, x: x.abs(), "plus_scalar": lambda L, x: x + 1,
         "scalar_times": lambda L, x: 2 * x, "compare": lambda L, x: x > 0,
         "square": lambda L, x: x * x, "where_scalar": lambda L, x: L.where(x > 0, x, 0.0)}


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_elementwise_result_follows_its_input(layout, op, device):
    t, d = _both(layout, device)
    _same(UNARY[op](dt, d), UNARY[op](torch, t))


# (first, second) operands: layouts of the same or broadcastable shapes
MIXES = {
    "cl_plus_contiguous": (lambda L, x: x.contiguous(memory_format=L.channels_last),
                           lambda L, x: x.contiguous()),
    "contiguous_plus_cl": (lambda L, x: x.contiguous(),
                           lambda L, x: x.contiguous(memory_format=L.channels_last)),
    "cl_plus_channel_bias": (lambda L, x: x.contiguous(memory_format=L.channels_last),
                             lambda L, x: x[0, :, :1, :1].contiguous()),
    "bias_plus_cl": (lambda L, x: x[0, :, :1, :1].contiguous(),
                     lambda L, x: x.contiguous(memory_format=L.channels_last)),
    "row_plus_permuted": (lambda L, x: x[0, 0, 0].contiguous(),
                          lambda L, x: x.permute(0, 3, 1, 2).permute(0, 2, 3, 1)),
    "permuted_plus_0d": (lambda L, x: x.permute(3, 1, 0, 2), lambda L, x: x[0, 0, 0, 0]),
    "two_permutations": (lambda L, x: x.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3),
                         lambda L, x: x.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2)),
    "expanded_plus_transposed": (lambda L, x: x[:, :1].expand(2, 3, 4, 5),
                                 lambda L, x: x.transpose(2, 3).contiguous().transpose(2, 3)),
}


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "where"])
@pytest.mark.parametrize("mix", sorted(MIXES))
def test_binary_and_ternary_results_follow_pytorchs_tie_breaking(mix, op, device):
    first, second = MIXES[mix]
    a = _np((2, 3, 4, 5))
    ta, da = torch.tensor(a), dt.tensor(a, device=device)
    fn = {"add": lambda L, x, y: x + y, "mul": lambda L, x, y: L.mul(x, y),
          "maximum": lambda L, x, y: L.maximum(x, y),
          "where": lambda L, x, y: L.where(y > 0, x, y)}[op]
    _same(fn(dt, first(dt, da), second(dt, da)), fn(torch, first(torch, ta), second(torch, ta)))


COPIES = {"clone": lambda L, x: x.clone(), "to_float64": lambda L, x: x.to(L.float64),
          "half": lambda L, x: x.half(), "empty_like": lambda L, x: L.empty_like(x),
          "zeros_like": lambda L, x: L.zeros_like(x), "ones_like": lambda L, x: L.ones_like(x),
          "full_like": lambda L, x: L.full_like(x, 3.0),
          "rand_like_shape": lambda L, x: L.rand_like(x) * 0,
          "contiguous": lambda L, x: x.contiguous(),
          "clone_contiguous": lambda L, x: x.clone(memory_format=L.contiguous_format),
          "to_contiguous_format": lambda L, x: x.to(memory_format=L.contiguous_format)}


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", sorted(COPIES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_copies_and_like_factories_preserve_format(layout, op, device):
    t, d = _both(layout, device)
    want = COPIES[op](torch, t)
    got = COPIES[op](dt, d)
    if op == "empty_like":
        assert got.stride() == want.stride() and tuple(got.shape) == tuple(want.shape)
    else:
        _same(got, want)


@pytest.mark.parametrize("layout", ["contiguous", "permuted_4d", "channels_last"])
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_like_factories_and_clone_take_a_memory_format(layout, fmt):
    t, d = _both(layout)
    for f in ("empty_like", "zeros_like", "randn_like"):
        assert getattr(dt, f)(d, memory_format=getattr(dt, fmt)).stride() == \
            getattr(torch, f)(t, memory_format=getattr(torch, fmt)).stride()
    _same(d.clone(memory_format=getattr(dt, fmt)), t.clone(memory_format=getattr(torch, fmt)))
    _same(d.to(memory_format=getattr(dt, fmt)), t.to(memory_format=getattr(torch, fmt)))


def test_a_bad_memory_format_raises_as_pytorch():
    x = dt.randn(2, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        dt.zeros_like(x, memory_format=dt.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4"):
        torch.zeros_like(torch.randn(2, 3), memory_format=torch.channels_last)
    with pytest.raises(TypeError, match="empty_like.*memory_format"):
        dt.empty_like(x, memory_format="channels_last")


def test_view_of_a_transposed_result_raises_as_in_pytorch():
    t, d = _both("transposed_2d")
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        (t * 2).view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        (d * 2).view(-1)
    np.testing.assert_array_equal((d * 2).reshape(-1).numpy(), (t * 2).reshape(-1).numpy())


def test_in_place_and_out_keep_the_outs_layout():
    t, d = _both("channels_last")
    out_t, out_d = torch.empty(2, 3, 4, 5), dt.empty(2, 3, 4, 5)
    torch.add(t, 1, out=out_t)
    dt.add(d, 1, out=out_d)
    _same(out_d, out_t)
    c_t, c_d = _both("transposed_2d")
    r_t, r_d = torch.zeros(4, 3), dt.zeros(4, 3)
    r_t.add_(c_t)
    r_d.add_(c_d)
    _same(r_d, r_t)
    c_d.mul_(3)
    c_t.mul_(3)
    _same(c_d, c_t)


def test_gradients_flow_through_the_permuted_computation():
    """Values of the gradients are exact; a partial in-place write through a view of a
    laid-out result keeps the rest of its history (its root is a plain tensor)."""
    a = _np((2, 3, 4, 5))
    w = _np((3, 1, 1))
    results = []
    for L in (torch, dt):
        x = L.tensor(a).contiguous(memory_format=L.channels_last).requires_grad_()
        y = (x * L.tensor(w)).sin() + 1
        y[0].mul_(2)
        (y * y).sum().backward()
        results.append((y.stride(), x.grad.detach().numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)


IMAGE_OPS = {
    "conv2d": lambda L, F, x, mk: F.conv2d(x, mk(4, 3, 3, 3), mk(4), padding=1),
    "conv2d_weight_cl": lambda L, F, x, mk: F.conv2d(
        x.contiguous(), mk(4, 3, 3, 3).contiguous(memory_format=L.channels_last)),
    "conv_transpose2d": lambda L, F, x, mk: F.conv_transpose2d(x, mk(3, 4, 3, 3), stride=2),
    "batch_norm_train": lambda L, F, x, mk: F.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda L, F, x, mk: F.batch_norm(x, L.zeros(3), L.ones(3), mk(3), mk(3)),
    "group_norm": lambda L, F, x, mk: F.group_norm(x, 3),
    "max_pool2d": lambda L, F, x, mk: F.max_pool2d(x, 3, 2, 1),
    "max_pool2d_indices": lambda L, F, x, mk: F.max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda L, F, x, mk: F.avg_pool2d(x, 2),
    "adaptive_avg_pool2d_3": lambda L, F, x, mk: F.adaptive_avg_pool2d(x, 3),
    "adaptive_avg_pool2d_1": lambda L, F, x, mk: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda L, F, x, mk: F.adaptive_max_pool2d(x, (3, 5)),
    "nearest": lambda L, F, x, mk: F.interpolate(x, scale_factor=2),
    "bilinear": lambda L, F, x, mk: F.interpolate(x, size=(5, 7), mode="bilinear"),
    "pad": lambda L, F, x, mk: F.pad(x, (1, 2, 0, 1)),
    "relu_module": lambda L, F, x, mk: L.nn.ReLU()(x),
}


@pytest.mark.parametrize("batch", [2, 1])
@pytest.mark.parametrize("op", sorted(IMAGE_OPS))
def test_image_ops_give_channels_last_for_channels_last_inputs(op, batch):
    shape = (batch, 3, 8, 8)
    got = []
    for L in (torch, dt):
        rng = np.random.default_rng(3)
        mk = lambda *s, L=L, rng=rng: L.tensor(rng.standard_normal(s).astype(np.float32))
        x = mk(*shape).contiguous(memory_format=L.channels_last)
        got.append(IMAGE_OPS[op](L, L.nn.functional, x, mk))
    _same(got[1], got[0])


def test_image_ops_on_contiguous_inputs_stay_contiguous():
    x = dt.randn(2, 3, 8, 8)
    for op in ("conv2d", "max_pool2d", "avg_pool2d", "bilinear", "pad", "group_norm"):
        rng = np.random.default_rng(3)
        mk = lambda *s: dt.tensor(rng.standard_normal(s).astype(np.float32))
        r = IMAGE_OPS[op](dt, dt.nn.functional, x, mk)
        assert r.is_contiguous() and r.stride() == dt.empty(r.shape).stride()


def test_channels_last_3d_results_where_pytorch_gives_them():
    got = []
    for L in (torch, dt):
        rng = np.random.default_rng(5)
        x = L.tensor(rng.standard_normal((2, 3, 4, 6, 6)).astype(np.float32))
        x = x.contiguous(memory_format=L.channels_last_3d)
        w = L.tensor(rng.standard_normal((4, 3, 3, 3, 3)).astype(np.float32))
        F = L.nn.functional
        # PyTorch 2.13's CPU avg_pool3d and adaptive 3-d pools give contiguous results
        got.append((F.conv3d(x, w), F.max_pool3d(x, 2), F.avg_pool3d(x, 2),
                    F.adaptive_avg_pool3d(x, 2), F.adaptive_max_pool3d(x, 2),
                    F.interpolate(x, scale_factor=2, mode="trilinear"),
                    F.batch_norm(x, None, None, training=True), F.pad(x, (1, 1))))
    for a, b in zip(got[1], got[0]):
        _same(a, b, tol=1e-5)


# -- the pure rules over random layouts ------------------------------------------------

def _random_layout(shape, rnd):
    n = len(shape)
    perm = list(range(n))
    rnd.shuffle(perm)
    inv = [perm.index(i) for i in range(n)]
    r = rnd.random()
    if r < 0.15 and n:
        small = tuple(1 if rnd.random() < 0.5 else s for s in shape)
        return _random_layout(small, rnd).expand(*shape)
    if r < 0.3 and n:
        big = torch.randn([shape[p] * 2 for p in perm]).permute(inv)
        return big[tuple(slice(0, None, 2) for _ in range(n))]
    if r > 0.9 and n and 0 not in shape:
        return torch.as_strided(torch.randn(200), shape,
                                [rnd.choice([0, 1, 2, 3, 5]) for _ in shape])
    return torch.randn([shape[p] for p in perm]).permute(inv) if n else torch.randn(())


def _none_if_contiguous(t):
    st = tuple(t.stride())
    return None if st == tuple(torch.empty(tuple(t.shape)).stride()) else st


def test_the_rules_match_pytorch_over_random_layouts():
    rnd = random.Random(0)
    shapes = [(2, 3), (3, 1), (1, 4), (2, 3, 4), (2, 1, 4), (1, 1, 3), (2, 3, 4, 5),
              (2, 1, 4, 5), (1, 3, 1, 1), (3, 0), (0, 2, 3), (4, 1, 1, 5), (2, 2, 2, 2)]
    for _ in range(1500):
        shape = rnd.choice(shapes)
        a = _random_layout(shape, rnd)
        kind = rnd.choice(["unary", "scalar", "same", "broadcast"])
        if kind == "unary":
            operands, out = [a], torch.exp(a)
        elif kind == "scalar":
            operands, out = [a, None], a + 1
        elif kind == "same":
            b = _random_layout(shape, rnd)
            operands, out = [a, b], a + b
        else:
            cut = rnd.randrange(len(shape))
            b = _random_layout(tuple(1 if rnd.random() < 0.5 else s for s in shape)[cut:], rnd)
            operands = [a, b] if rnd.random() < 0.5 else [b, a]
            out = operands[0] + operands[1]
        described = [((), ()) if x is None else (tuple(x.shape), tuple(x.stride()))
                     for x in operands]
        assert iterator_strides(tuple(out.shape), described) == _none_if_contiguous(out), \
            (described, out.stride())
        assert preserve_strides(tuple(a.shape), tuple(a.stride())) == \
            _none_if_contiguous(torch.empty_like(a)), (a.shape, a.stride())


def test_suggested_format_matches_pytorch_over_random_layouts():
    from torch._prims_common import suggest_memory_format
    rnd = random.Random(1)
    for _ in range(1500):
        n = rnd.choice([4, 5])
        shape = [rnd.choice([1, 2, 3]) for _ in range(n)]
        t = _random_layout(tuple(shape), rnd)
        want = str(suggest_memory_format(t)).split(".")[-1]
        assert suggested_format(tuple(t.shape), tuple(t.stride())).name == want


def test_leaf_gradients_take_the_leafs_layout_as_pytorchs_accumulate_grad():
    got = []
    for L in (torch, dt):
        rng = np.random.default_rng(9)
        mk = lambda *s, L=L, rng=rng: L.tensor(rng.standard_normal(s).astype(np.float32))
        x = mk(2, 3, 4, 5).contiguous(memory_format=L.channels_last).requires_grad_()
        t = mk(3, 4).t().requires_grad_()
        c = mk(4, 3).requires_grad_()
        w = mk(4, 3, 3, 3)
        (L.nn.functional.conv2d(x, w).sum() + (x * 2).sum()).backward()
        (t.exp() * 3).sum().backward()
        (c.t() * mk(4, 3).t()).sum().backward()
        got.append((x.grad, t.grad, c.grad))
    for a, b in zip(got[1], got[0]):
        _same(a, b, tol=1e-5)


def test_a_channels_last_model_trains_in_channels_last():
    """Module.to(memory_format=) lays 4-d parameters out so, convert_conv2d_weight_memory_format
    the convolutions' weights; results and gradients follow, values as PyTorch's."""
    got = []
    a = np.random.default_rng(11).standard_normal((2, 3, 8, 8)).astype(np.float32)
    for L in (torch, dt):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4), L.nn.ReLU(),
                            L.nn.MaxPool2d(2)).to(memory_format=L.channels_last)
        x = L.tensor(a)
        y = m(x.to(memory_format=L.channels_last))
        y.sum().backward()
        c = L.nn.utils.convert_conv2d_weight_memory_format(L.nn.Conv2d(3, 4, 3), L.channels_last)
        got.append((y, m[0].weight, m[0].weight.grad, c.weight, c(x)))
    for a, b in zip(got[1], got[0]):
        _same(a, b, tol=1e-4)

