"""The torch.* names beside the nn forms of test_torch_level_forms_vs_pytorch.py, each
against PyTorch's with the same arguments: the reshaping nn forms (convolution, conv_tbc,
embedding_bag's four results, native_dropout, ctc_loss, grid_sampler, the rnn cells),
small functions of tensors (range, chain_matmul, frobenius_norm, unravel_index, ...),
frombuffer, poisson / binomial (PyTorch's draws for a seed), the process-wide switches,
the deprecated default setters and memory_format."""
from __future__ import annotations

import array
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

rng = np.random.default_rng(1)


def r(*shape):
    return rng.standard_normal(shape)


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v)
    if isinstance(v, tuple) and v and isinstance(v[0], np.ndarray):
        return tuple(_to(lib, a) for a in v)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [_to(lib, a) for a in v]
    return v


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)


def _check(theirs, ours, rtol=1e-12):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(theirs, ours):
            _check(a, b, rtol)
        return
    t, o = _np(theirs), _np(ours)
    assert t.shape == o.shape and str(o.dtype) == str(t.dtype)
    if t.dtype.kind in "fc":
        np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(o, t)


def _both(name, args, kwargs=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch, name)(*[_to(torch, a) for a in args], **(kwargs or {}))
        ours = getattr(dt, name)(*[_to(dt, a) for a in args], **(kwargs or {}))
    return theirs, ours


IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9], np.int64)
OFF = np.array([0, 4, 4], np.int64)
W10 = r(10, 3)
LP = np.log(rng.dirichlet(np.ones(5), (7, 2)))            # (T, N, C) log-probabilities
TG = np.array([[1, 2, 2], [3, 1, 4]], np.int64)
GRID4, GRID5 = rng.uniform(-1.1, 1.1, (2, 3, 4, 2)), rng.uniform(-1.1, 1.1, (1, 2, 3, 2, 3))

CASES = [
    ("convolution", (r(2, 4, 9), r(6, 2, 3), r(6), [2], [1], [1], False, [0], 2)),
    ("convolution", (r(2, 3, 7, 6), r(4, 3, 3, 2), None, (1, 2), (1, 0), (2, 1), False, (0, 0), 1)),
    ("convolution", (r(1, 2, 5, 4, 4), r(3, 2, 2, 2, 2), r(3), [1], [1], [1], False, [0], 1)),
    ("convolution", (r(2, 4, 5), r(4, 3, 3), r(3), [2], [1], [1], True, [1], 1)),
    ("convolution", (r(1, 4, 4, 3), r(4, 1, 3, 3), None, [2], [1], [1], True, [1, 0], 4)),
    ("convolution", (r(1, 2, 3, 3, 2), r(2, 2, 2, 2, 2), r(2), [2], [0], [1], True, [0], 1)),
    ("conv_tbc", (r(7, 2, 3), r(3, 3, 4), r(4))),
    ("conv_tbc", (r(7, 2, 3), r(3, 3, 4), r(4), 1)),
    ("max_pool1d_with_indices", (r(2, 3, 9), 3)),
    ("max_pool1d_with_indices", (r(2, 3, 9), [3], [2], [1], [2], True)),
    ("native_channel_shuffle", (r(2, 6, 3), 3)),
    ("grid_sampler", (r(2, 3, 5, 4), GRID4, 0, 0, False)),
    ("grid_sampler", (r(2, 3, 5, 4), GRID4, 1, 1, True)),
    ("grid_sampler", (r(2, 3, 5, 4), GRID4, 2, 2, False)),
    ("grid_sampler", (r(1, 2, 4, 3, 5), GRID5, 0, 2, True)),
    ("grid_sampler_2d", (r(2, 3, 5, 4), GRID4, 0, 1, False)),
    ("grid_sampler_3d", (r(1, 2, 4, 3, 5), GRID5, 1, 0, False)),
    ("affine_grid_generator", (r(2, 2, 3), [2, 3, 4, 5], False)),
    ("affine_grid_generator", (r(1, 3, 4), (1, 2, 3, 4, 2), True)),
    ("ctc_loss", (LP, TG, [7, 6], [3, 2])),
    ("ctc_loss", (LP, TG, np.array([7, 5]), np.array([2, 3]), 0, 1)),
    ("ctc_loss", (LP, TG, [7, 6], [3, 2], 0, 2, True)),
    ("ctc_loss", (LP, TG.reshape(-1)[:5], [7, 7], [3, 2], 0, 0)),
]
for mode in (0, 1, 2):
    for dtype in (np.float64, np.float32):
        CASES += [
            ("embedding_bag", (W10.astype(dtype), IDX, OFF, False, mode)),
            ("embedding_bag", (W10.astype(dtype), IDX, np.array([0, 3, 8]), False, mode, False,
                               None, True)),
            ("embedding_bag", (W10.astype(dtype), IDX, OFF, False, mode, False, None, False, 4)),
            ("embedding_bag", (W10.astype(dtype), IDX, OFF, False, mode, False, None, False, -1)),
        ]
# 2-D indices are taken flat; PyTorch's other paths raise or abort on them
CASES += [("embedding_bag", (W10.astype(np.float32), IDX.reshape(2, 4), np.array([0, 1]), False,
                             0))]
CASES += [("embedding_bag", (W10, IDX, OFF, False, 0, False, rng.uniform(0, 1, 8))),
          ("embedding_bag", (W10.astype(np.float32), IDX, OFF, False, 0, False,
                             rng.uniform(0, 1, 8).astype(np.float32))),
          ("embedding_bag", (W10, IDX.astype(np.int32), OFF.astype(np.int32), False, 2))]
for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)):
    hx = (r(3, 5), r(3, 5)) if name == "lstm_cell" else r(3, 5)
    CASES += [(name, (r(3, 4), hx, r(gates * 5, 4), r(gates * 5, 5), r(gates * 5), r(gates * 5))),
              (name, (r(3, 4), hx, r(gates * 5, 4), r(gates * 5, 5)))]


def _ids():
    seen = {}
    for name, _ in CASES:
        seen[name] = seen.get(name, -1) + 1
        yield f"{name}-{seen[name]}"


@pytest.mark.parametrize("name,args", CASES, ids=list(_ids()))
def test_same_result_as_pytorch(name, args):
    theirs, ours = _both(name, args)
    single = any(getattr(a, "dtype", None) == np.float32 for a in args)
    _check(theirs, ours, rtol=1e-5 if single else 1e-11)


def test_keyword_forms():
    x, w = r(1, 2, 6), r(3, 2, 2)
    kw = {"stride": [1], "padding": [1], "dilation": [1], "transposed": False,
          "output_padding": [0], "groups": 1}
    _check(*_both("convolution", (x, w, None), kw))
    for name, hx, gates in (("lstm_cell", [r(2, 3), r(2, 3)], 4), ("gru_cell", r(2, 3), 3)):
        kw = {"hx": hx, "w_ih": r(gates * 3, 4), "w_hh": r(gates * 3, 3), "b_ih": None,
              "b_hh": r(gates * 3)}
        inp = r(2, 4)
        theirs = getattr(torch, name)(torch.tensor(inp),
                                      **{k: _to(torch, v) for k, v in kw.items()})
        ours = getattr(dt, name)(dt.tensor(inp), **{k: _to(dt, v) for k, v in kw.items()})
        _check(theirs, ours)
    _check(*_both("max_pool1d_with_indices", (r(1, 2, 8),), {"kernel_size": 2, "ceil_mode": True}))


GRAD_CASES = [
    ("convolution", (r(2, 3, 5, 5), r(4, 3, 3, 3), r(4), [1], [1], [1], False, [0], 1)),
    ("convolution", (r(1, 4, 3, 3), r(4, 2, 3, 3), r(4), [2], [1], [1], True, [1], 2)),
    ("conv_tbc", (r(6, 2, 3), r(2, 3, 4), r(4), 1)),
    ("embedding_bag", (W10, IDX, OFF, False, 1)),
    ("grid_sampler", (r(1, 2, 4, 4), GRID4[:1], 0, 0, False)),
    ("affine_grid_generator", (r(2, 2, 3), [2, 1, 3, 4], False)),
    ("lstm_cell", (r(3, 4), (r(3, 5), r(3, 5)), r(20, 4), r(20, 5), r(20), r(20))),
    ("gru_cell", (r(3, 4), r(3, 5), r(15, 4), r(15, 5), r(15), r(15))),
    ("rnn_tanh_cell", (r(3, 4), r(3, 5), r(5, 4), r(5, 5))),
    ("rnn_relu_cell", (r(3, 4), r(3, 5), r(5, 4), r(5, 5), r(5), r(5))),
]


def _leaves(lib, args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(lib.tensor(a, requires_grad=True))
        elif isinstance(a, tuple) and a and isinstance(a[0], np.ndarray):
            out.append(tuple(lib.tensor(v, requires_grad=True) for v in a))
        else:
            out.append(_to(lib, a))
    return out


@pytest.mark.parametrize("name,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_pytorch(name, args):
    grads = []
    for lib in (torch, dt):
        leaves = _leaves(lib, args)
        result = getattr(lib, name)(*leaves)
        result = result[0] if name == "embedding_bag" else result
        parts = result if isinstance(result, tuple) else (result,)
        sum(p.sum() * (i + 1) for i, p in enumerate(parts)).backward()
        flat = [t for a in leaves for t in (a if isinstance(a, tuple) else (a,))]
        grads.append([t.grad for t in flat if isinstance(t, lib.Tensor) and t.requires_grad])
    _check(grads[0], grads[1], rtol=1e-10)


def test_ctc_loss_gradient_through_log_softmax():
    """Through log_softmax, as programs use it: PyTorch's kernel returns a gradient for
    log_probs that is not the loss's derivative alone, and agrees once chained."""
    logits = r(7, 2, 5)
    grads = []
    for lib in (torch, dt):
        x = lib.tensor(logits, requires_grad=True)
        for red in (0, 1, 2):
            loss = lib.ctc_loss(x.log_softmax(2), lib.tensor(TG), [7, 6], [3, 2], 0, red)
            (loss.sum() if red == 0 else loss).backward()
        grads.append(x.grad)
    _check(*grads, rtol=1e-10)


def test_embedding_renorm_matches_pytorch():
    w = r(6, 3) * 3
    for max_norm, norm_type in ((1.0, 2.0), (2.5, 1.0)):
        a, b = torch.tensor(w), dt.tensor(w)
        ra = torch.embedding_renorm_(a, torch.tensor([0, 2, 2, 5]), max_norm, norm_type)
        rb = dt.embedding_renorm_(b, dt.tensor([0, 2, 2, 5]), max_norm, norm_type)
        assert rb is b and ra is a
        _check(a, b)


def test_native_dropout_draws_and_masks_as_pytorch():
    x = np.linspace(-1, 1, 60).reshape(5, 12)
    for dtype in ("float32", "float64"):
        results = []
        for lib in (torch, dt):
            lib.manual_seed(7)
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            out, mask = lib.native_dropout(t, 0.3, True)
            (out * 2).sum().backward()
            results.append((out, mask, t.grad, lib.rand(3)))
        _check(*results, rtol=0)
    for args in ((0.3, False), (0.3, None), (1.0, True), (0.0, True)):
        _check(*_both("native_dropout", (x,) + args))
    theirs, ours = _both("native_dropout", (np.zeros((0, 3)), 0.5, True))
    _check(theirs, ours)


def test_nn_forms_raise_pytorchs_errors():
    cases = [
        ("convolution", (r(1, 2, 5), r(3, 2, 2), None, 1, [0], [1], False, [0], 1), TypeError),
        ("convolution", (r(2, 5), r(3, 2, 2), None, [1], [0], [1], False, [0], 1), RuntimeError),
        ("conv_tbc", (r(7, 2, 3), r(3, 3, 4), None), TypeError),
        ("conv_tbc", (r(7, 2, 3), r(3, 2, 4), r(4)), RuntimeError),
        ("lstm_cell", (r(3, 4), (r(3, 5),), r(20, 4), r(20, 5)), RuntimeError),
        ("lstm_cell", (r(3, 5), (r(3, 5), r(3, 5)), r(20, 4), r(20, 5)), RuntimeError),
        ("gru_cell", (r(3, 4), r(2, 5), r(15, 4), r(15, 5)), RuntimeError),
        ("rnn_tanh_cell", (r(4), r(5), r(5, 4), r(5, 5)), IndexError),
        ("embedding_bag", (W10, IDX, OFF, False, 3), RuntimeError),
        ("embedding_bag", (W10, IDX, OFF, False, 1, False, None, False, 10), RuntimeError),
        ("grid_sampler_2d", (r(1, 1, 3, 3, 3), GRID5, 0, 0, False), RuntimeError),
        ("affine_grid_generator", (r(2, 2, 3), [2, 3, 4], False), RuntimeError),
    ]
    for name, args, exc in cases:
        for lib in (torch, dt):
            with pytest.raises(exc):
                getattr(lib, name)(*[_to(lib, a) for a in args])


# -- small functions of tensors ---------------------------------------------------------------

RANGE_ARGS = [((1, 4), {}), ((0, 1, 0.25), {}), ((1.0, 4, 1.5), {}), ((4, 1, -1), {}),
              ((0, 0.3, 0.1), {}), ((0.1, 7.3, 0.37), {"dtype": "float64"}),
              ((1, 4), {"dtype": "int64"}), ((-3, 9, 4), {"dtype": "int32"}),
              ((2, 2), {}), ((), {"start": 1, "end": 3}), ((0, 5, 2), {"dtype": "float16"})]


@pytest.mark.parametrize("args,kwargs", RANGE_ARGS)
def test_range_includes_end_and_warns(args, kwargs):
    results = []
    for lib in (torch, dt):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            results.append(lib.range(*args, **kw))
    _check(*results, rtol=0)


def test_range_errors_and_grad():
    for lib in (torch, dt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="step must be nonzero"):
                lib.range(1, 4, 0)
            with pytest.raises(RuntimeError, match="inconsistent with step sign"):
                lib.range(4, 1)
            with pytest.raises(TypeError):
                lib.range(4)
            assert lib.range(0, 2, requires_grad=True).requires_grad
            out = lib.empty(0)
            assert lib.range(0, 3, out=out) is out and out.tolist() == [0, 1, 2, 3]


def test_chain_matmul():
    mats = [r(2, 3), r(3, 4), r(4, 5), r(5, 2)]
    for n in (1, 2, 3, 4):
        _check(*_both("chain_matmul", tuple(mats[:n])))
    a = dt.tensor(mats[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dt.chain_matmul(a) is not a
        for lib in (torch, dt):
            with pytest.raises(RuntimeError, match="Expected one or more matrices"):
                lib.chain_matmul()
            with pytest.raises(RuntimeError, match="Tensor dimension is 1, expected 2"):
                lib.chain_matmul(lib.ones(3), lib.ones(3, 4))


def test_deprecated_forms_warn_once_unless_warn_always():
    calls = {"chain_matmul": lambda lib: lib.chain_matmul(lib.ones(2, 2)),
             "frobenius_norm": lambda lib: lib.frobenius_norm(lib.ones(2, 2), (0, 1)),
             "nuclear_norm": lambda lib: lib.nuclear_norm(lib.ones(2, 2))}
    for name, call in calls.items():
        for lib in (torch, dt):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call(lib)                               # the once-only warning is given
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                call(lib)
            assert not seen, (lib.__name__, name)
            lib.set_warn_always(True)
            try:
                with pytest.warns(UserWarning, match="deprecated"):
                    call(lib)
            finally:
                lib.set_warn_always(False)


FROB = [((r(3, 4), (0, 1)), {}), ((r(3, 4), [1], True), {}), ((r(3, 4), []), {}),
        ((r(3, 4), 0), {}), ((r(2, 3, 4), (0, 2)), {"keepdim": True}),
        ((r(3, 4) + 1j * r(3, 4), (0, 1)), {})]
NUC = [((r(3, 4),), {}), ((r(3, 4), True), {}), ((r(2, 3, 4), (1, 2)), {}),
       ((r(2, 3, 4),), {"dim": (0, 2), "keepdim": True}), ((r(2, 3, 4),), {})]


@pytest.mark.parametrize("name,args,kwargs", [("frobenius_norm",) + c for c in FROB]
                         + [("nuclear_norm",) + c for c in NUC])
def test_deprecated_norms(name, args, kwargs):
    _check(*_both(name, args, kwargs), rtol=1e-12)


def test_deprecated_norm_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, dt):
            with pytest.raises(RuntimeError, match="at most 2 dimensions"):
                lib.frobenius_norm(lib.ones(2, 2, 2), (0, 1, 2))
            with pytest.raises(RuntimeError):
                lib.frobenius_norm(lib.ones(2, 2, dtype=lib.int64), (0, 1))
            with pytest.raises(RuntimeError):
                lib.nuclear_norm(lib.ones(3))


def test_small_predicates():
    for lib in (torch, dt):
        t = lib.ones(2)
        assert lib.is_neg(t) is False and lib.is_distributed(t) is False
        assert lib.get_device(t) == -1 and lib.is_vulkan_available() is False
    assert not dt.is_storage(dt.ones(2)) and not dt.is_storage([1, 2])


def test_detach():
    for lib in (torch, dt):
        a = lib.ones(3, requires_grad=True) * 2
        d = lib.detach(a)
        assert not d.requires_grad and d.data_ptr() == a.data_ptr()
        assert lib.detach_(a) is a and not a.requires_grad


def test_empty_strided():
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)), ((0, 3), (3, 1)),
                         ((), ())):
        theirs = torch.empty_strided(size, stride, dtype=torch.float64)
        ours = dt.empty_strided(size, stride, dtype=dt.float64)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
        assert ours.dtype is dt.float64
    assert dt.empty_strided((2,), (1,), requires_grad=True).requires_grad


@pytest.mark.parametrize("indices,shape", [
    (np.array([-1, 5, 7, 0]), (2, 4)), (np.array([[3, 22], [9, 17]]), (2, 3, 4)),
    (np.array(7), 10), (np.array([4, 11], np.int32), [3, 4])])
def test_unravel_index(indices, shape):
    _check(torch.unravel_index(torch.tensor(indices), shape),
           dt.unravel_index(dt.tensor(indices), shape))


def test_unravel_index_errors():
    for lib in (torch, dt):
        with pytest.raises(TypeError):
            lib.unravel_index(lib.tensor([1.0]), (2, 2))
        with pytest.raises((ValueError, RuntimeError)):
            lib.unravel_index(lib.tensor([1]), (2, -2))


# -- frombuffer -------------------------------------------------------------------------------

def test_frombuffer_shares_the_buffer():
    for lib in (torch, dt):
        buf = bytearray(range(16))
        t = lib.frombuffer(buf, dtype=lib.int16)
        assert t.tolist() == torch.frombuffer(bytearray(range(16)), dtype=torch.int16).tolist()
        t[0] = -1
        assert buf[:2] == b"\xff\xff"
        buf[15] = 0
        assert t[-1].item() == 14
    for kwargs in ({"dtype": "uint8", "count": 4, "offset": 3}, {"dtype": "int32", "offset": 4},
                   {"dtype": "complex64"}, {"dtype": "bool"}, {"dtype": "float16", "count": 2}):
        results = [lib.frombuffer(bytearray(range(16)), **{
            k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()})
            for lib in (torch, dt)]
        _check(*results, rtol=0)
    _check(torch.frombuffer(array.array("f", [1, 2, 3]), dtype=torch.float32),
           dt.frombuffer(array.array("f", [1, 2, 3]), dtype=dt.float32))


def test_frombuffer_errors():
    b = bytearray(16)
    cases = [({"dtype": "int32", "offset": 2}, ValueError),
             ({"dtype": "int32", "count": 5}, ValueError),
             ({"dtype": "int32", "offset": 16}, ValueError),
             ({"dtype": "int32", "offset": -1}, ValueError),
             ({"dtype": "int32", "count": 0}, ValueError),
             ({"dtype": "int32", "requires_grad": True}, RuntimeError)]
    for lib in (torch, dt):
        for kwargs, exc in cases:
            with pytest.raises(exc):
                lib.frombuffer(b, **{k: getattr(lib, v) if k == "dtype" else v
                                     for k, v in kwargs.items()})
        with pytest.raises(ValueError, match="buffer protocol"):
            lib.frombuffer([1, 2], dtype=lib.int32)
        with pytest.raises(ValueError):
            lib.frombuffer(bytearray(), dtype=lib.int32)
        with pytest.raises(RuntimeError, match="could not retrieve buffer"):
            lib.frombuffer(memoryview(b)[::2], dtype=lib.uint8)
        assert lib.frombuffer(b, dtype=lib.float32, requires_grad=True).requires_grad


def test_frombuffer_read_only_buffer_warns():
    for lib in (torch, dt):
        lib.set_warn_always(True)
        try:
            with pytest.warns(UserWarning, match="not writable"):
                t = lib.frombuffer(bytes(range(8)), dtype=lib.uint8)
        finally:
            lib.set_warn_always(False)
        assert t.tolist() == list(range(8))


# -- poisson and binomial: PyTorch's draws ---------------------------------------------------

RATES = [0.0, 0.3, 2.5, 9.99, 10.0, 37.5, 1e3, 6e4]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_poisson_draws_as_pytorch(dtype):
    rates = np.tile(RATES, 250).reshape(40, 50)
    results = []
    for lib in (torch, dt):
        lib.manual_seed(11)
        out = lib.poisson(lib.tensor(rates, dtype=getattr(lib, dtype)))
        gen = lib.Generator().manual_seed(5)
        out_gen = lib.poisson(lib.tensor(rates[:2].T, dtype=getattr(lib, dtype)), gen)
        results.append((out, out_gen, lib.rand(4), lib.rand(2, generator=gen)))
    _check(*results, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_as_pytorch(dtype):
    # both of ATen's samplers: inversion (count * min(p, 1 - p) < 10) and BTRS, p on each
    # side of 0.5, and the edge cases (no trials, p of 0 or 1)
    counts = np.tile([0, 1, 5, 20, 100, 1000, 7, 3, 50, 10, 24, 9, 30, 60], 150)
    probs = np.tile([0.3, 0.5, 0.05, 0.9, 0.99, 0.5, 0.01, 1.0, 0.7, 0.0, 0.35, 0.6, 0.8, 0.4],
                    150)
    results = []
    for lib in (torch, dt):
        d = getattr(lib, dtype)
        lib.manual_seed(2)
        out = lib.binomial(lib.tensor(counts, dtype=d), lib.tensor(probs, dtype=d))
        broadcast = lib.binomial(lib.tensor(counts[:12], dtype=d), lib.tensor(0.37, dtype=d))
        results.append((out, broadcast, lib.rand(3)))
    _check(*results, rtol=0)


def test_poisson_and_binomial_statistics():
    dt.manual_seed(0)
    x = dt.poisson(dt.full((20000,), 4.0, dtype=dt.float64)).numpy()
    assert abs(x.mean() - 4) < 0.06 and abs(x.var() - 4) < 0.2
    y = dt.binomial(dt.full((20000,), 40.0), dt.full((20000,), 0.3)).numpy()
    assert abs(y.mean() - 12) < 0.1 and abs(y.var() - 8.4) < 0.4
    assert y.min() >= 0 and y.max() <= 40


def test_poisson_and_binomial_errors_and_grad():
    for lib in (torch, dt):
        with pytest.raises(RuntimeError, match="non-negative"):
            lib.poisson(-lib.ones(2))
        with pytest.raises(NotImplementedError):
            lib.poisson(lib.ones(2, dtype=lib.int64))
        with pytest.raises(ValueError, match="floating-point"):
            lib.binomial(lib.ones(2, dtype=lib.int64), lib.ones(2))
        with pytest.raises(RuntimeError, match="Found dtype"):
            lib.binomial(lib.ones(2), lib.ones(2, dtype=lib.float64))
        with pytest.raises(NotImplementedError):
            lib.binomial(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16))
        rate = lib.full((3,), 2.0, requires_grad=True)
        lib.poisson(rate).sum().backward()
        assert rate.grad.tolist() == [0.0] * 3
        count = lib.full((3,), 9.0, requires_grad=True)
        drawn = lib.binomial(count, lib.full((3,), 0.5))
        assert drawn.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            drawn.sum().backward()
    for bad in (float("inf"), float("nan")):
        with pytest.raises(RuntimeError, match="finite"):
            dt.binomial(dt.tensor([bad]), dt.tensor([0.5]))
    with pytest.raises(RuntimeError, match="infinite rate"):
        dt.poisson(dt.tensor([float("inf")]))


# -- process-wide switches --------------------------------------------------------------------

def test_warn_always_and_flush_denormal_and_anomaly_switches():
    for lib in (torch, dt):
        assert not lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        lib.set_warn_always(False)
        with pytest.raises(RuntimeError, match="expects a bool"):
            lib.set_warn_always(1)
        with pytest.raises(RuntimeError, match="expects a bool"):
            lib.set_flush_denormal(1)
        try:
            lib.set_anomaly_enabled(True, False)
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            lib.set_anomaly_enabled(False)
            assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
            with pytest.raises(TypeError):
                lib.set_anomaly_enabled(1)
        finally:
            lib.set_anomaly_enabled(False)
    assert dt.set_flush_denormal(True) is False and dt.set_flush_denormal(False) is False


def test_deterministic_algorithms_flag():
    for lib in (torch, dt):
        try:
            assert not lib.are_deterministic_algorithms_enabled()
            lib.use_deterministic_algorithms(True, warn_only=True)
            assert lib.are_deterministic_algorithms_enabled()
            assert lib.is_deterministic_algorithms_warn_only_enabled()
            assert lib.get_deterministic_debug_mode() == 1
            lib.use_deterministic_algorithms(True)
            assert not lib.is_deterministic_algorithms_warn_only_enabled()
            assert lib.get_deterministic_debug_mode() == 2
            lib.set_deterministic_debug_mode("default")
            assert not lib.are_deterministic_algorithms_enabled()
            with pytest.raises(TypeError):
                lib.use_deterministic_algorithms(1)
        finally:
            lib.use_deterministic_algorithms(False)


_INTEROP = """
import sys
lib = __import__(sys.argv[1])
assert lib.get_num_interop_threads() == int(sys.argv[2])
lib.init_num_threads()
for bad in (0, "a"):
    try:
        lib.set_num_interop_threads(bad)
    except RuntimeError:
        pass
    else:
        raise AssertionError(bad)
lib.set_num_interop_threads(3)
assert lib.get_num_interop_threads() == 3
try:
    lib.set_num_interop_threads(2)
except RuntimeError as e:
    assert "cannot set number of interop threads" in str(e)
else:
    raise AssertionError("a second set_num_interop_threads was accepted")
"""


def test_interop_threads_are_set_once():
    """In fresh processes: set_num_interop_threads is once only in both libraries."""
    for lib, default in (("torch", str(torch.get_num_interop_threads())), ("dispatchtorch", "1")):
        subprocess.run([sys.executable, "-c", _INTEROP, lib, default], check=True, timeout=120)


def test_build_facts():
    assert dt.has_lapack is True and dt.has_spectral is True
    assert dt.has_mkl is dt.backends.mkl.is_available() is False
    assert dt.has_openmp is dt.backends.openmp.is_available() is False


# -- deprecated default setters ---------------------------------------------------------------

def test_deprecated_autocast_state_functions():
    for lib in (torch, dt):
        try:
            with pytest.warns(DeprecationWarning, match="is_autocast_enabled"):
                assert lib.is_autocast_cpu_enabled() is False
            with pytest.warns(DeprecationWarning):
                lib.set_autocast_cpu_enabled(True)
            assert lib.is_autocast_enabled("cpu")
            with pytest.warns(DeprecationWarning):
                lib.set_autocast_cpu_dtype(lib.float16)
            assert lib.get_autocast_dtype("cpu") is lib.float16
            with pytest.warns(DeprecationWarning):
                lib.set_autocast_gpu_dtype(lib.bfloat16)
            assert lib.get_autocast_dtype("cuda") is lib.bfloat16
            with pytest.raises(TypeError, match="must be a bool"):
                lib.set_autocast_cpu_enabled(1)
            with pytest.raises(TypeError, match="must be a torch.dtype"):
                lib.set_autocast_cpu_dtype(3)
        finally:
            lib.set_autocast_enabled("cpu", False)
            lib.set_autocast_dtype("cpu", lib.bfloat16)
            lib.set_autocast_dtype("cuda", lib.float16)


def test_get_device_module():
    assert dt.get_device_module("cpu") is dt.cpu is dt.get_device_module(dt.device("cpu"))
    assert dt.get_device_module(dt.device("cuda", 0)) is dt.cuda
    current = dt.accelerator.current_accelerator()
    assert dt.get_device_module() is getattr(dt, "cpu" if current is None else current.type)
    for lib in (torch, dt):
        with pytest.raises(RuntimeError):
            lib.get_device_module(3)
        with pytest.raises(RuntimeError):
            lib.get_device_module("foo")


def test_set_default_tensor_type():
    try:
        dt.set_warn_always(True)
        with pytest.warns(UserWarning, match="deprecated"):
            dt.set_default_tensor_type(dt.DoubleTensor)
        assert dt.get_default_dtype() is dt.float64 and dt.tensor([1.5]).dtype is dt.float64
        with pytest.warns(UserWarning):
            dt.set_default_tensor_type("torch.FloatTensor")
        assert dt.get_default_dtype() is dt.float32
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="floating-point"):
            dt.set_default_tensor_type(dt.LongTensor)
    finally:
        dt.set_warn_always(False)
        dt.set_default_dtype(dt.float32)


# -- memory_format ----------------------------------------------------------------------------

def test_memory_format_objects():
    names = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")
    for name in names:
        obj = getattr(dt, name)
        assert isinstance(obj, dt.memory_format) and pickle.loads(pickle.dumps(obj)) is obj
    assert len({id(getattr(dt, n)) for n in names}) == 4
    for lib in (torch, dt):
        with pytest.raises(TypeError, match="cannot create"):
            lib.memory_format()


def test_is_contiguous_for_a_memory_format():
    x = r(2, 3, 4, 5)
    views = [lambda lib: lib.tensor(x),
             lambda lib: lib.tensor(x).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
             lambda lib: lib.tensor(x[:, :1]),
             lambda lib: lib.tensor(x[:, :, :1, :1]).permute(0, 2, 3, 1).contiguous().permute(
                 0, 3, 1, 2),
             lambda lib: lib.tensor(x[0]),
             lambda lib: lib.tensor(r(2, 3, 2, 2, 2)),
             lambda lib: lib.tensor(r(2, 2, 2, 2, 3)).permute(0, 4, 1, 2, 3)]
    for make in views:
        for fmt in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
            assert make(dt).is_contiguous(memory_format=getattr(dt, fmt)) == \
                make(torch).is_contiguous(memory_format=getattr(torch, fmt)), fmt
    for lib in (torch, dt):
        with pytest.raises(TypeError):
            lib.ones(2).is_contiguous(memory_format=3)


def test_empty_permuted_and_norm_except_dim():
    for size, order in (((2, 3, 5, 7), (0, 2, 3, 1)), ((4, 2), (1, 0)), ((3,), (0,)), ((), ())):
        theirs, ours = torch.empty_permuted(size, order), dt.empty_permuted(size, order)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    for lib in (torch, dt):
        for order in ((0,), (0, 0), (0, 2)):
            with pytest.raises(RuntimeError):
                lib.empty_permuted((2, 3), order)
    v = r(3, 4, 5)
    for args in ((), (2, 0), (3, 1), (2, 2), (1, -1), (2, -2)):
        _check(*_both("norm_except_dim", (v,) + args))


def test_thread_safe_generator_outside_thread_workers():
    assert dt.thread_safe_generator() is None is torch.thread_safe_generator()
