"""uint16-64 and the float8 family: PyTorch 2.13's subset (storage, casts, views,
indexing, a few kernels) with its values, reprs and errors (docs/dtypes.md).

Hand values always; PyTorch 2.13 itself where installed."""
from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest

import dispatchtorch as dt

try:
    import torch
    TORCH = torch if torch.__version__.startswith("2.13") else None
except ImportError:
    TORCH = None
needs_torch = pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")

UNSIGNED = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
BARE = UNSIGNED + FLOAT8


def bits(t):
    return t._host().view(np.uint8)


# -- dtype objects, limits, promotion ---------------------------------------------------

@pytest.mark.parametrize("name, size, floating, signed", [
    ("uint16", 2, False, False), ("uint64", 8, False, False), ("float8_e4m3fn", 1, True, True),
    ("float8_e8m0fnu", 1, True, False)])
def test_dtype_attributes(name, size, floating, signed):
    d = getattr(dt, name)
    assert (d.itemsize, d.is_floating_point, d.is_complex, d.is_signed) == (size, floating, False, signed)
    assert dt.zeros(3, dtype=d).element_size() == size


def test_limits_hand_values():
    assert repr(dt.iinfo(dt.uint32)) == "iinfo(min=0, max=4.29497e+09, dtype=uint32)"
    assert dt.iinfo(dt.uint64).max == 2 ** 64 - 1
    f = dt.finfo(dt.float8_e4m3fn)
    assert (f.max, f.min, f.eps, f.tiny, f.resolution, f.bits) == (448.0, -448.0, 0.125, 2.0 ** -6, 1.0, 8)
    assert repr(f) == ("finfo(resolution=1, min=-448, max=448, eps=0.125, smallest_normal=0.015625, "
                       "tiny=0.015625, dtype=float8_e4m3fn)")
    assert dt.finfo(dt.float8_e5m2fnuz).eps == 0.125          # c10's value, not 2**-2
    with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
        dt.finfo(dt.uint16)
    with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
        dt.iinfo(dt.float8_e5m2)


def test_promotion_hand_values():
    assert dt.promote_types(dt.uint16, dt.float16) is dt.float16
    assert dt.promote_types(dt.uint32, dt.uint32) is dt.uint32
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not "
                                           "supported, attempted to promote UInt16 and Long"):
        dt.promote_types(dt.uint16, dt.int64)
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported, "
                                           "attempted to promote Float8_e4m3fn and Float"):
        dt.promote_types(dt.float8_e4m3fn, dt.float32)
    with pytest.raises(RuntimeError, match="attempted to promote UInt32 and Float8_e5m2"):
        dt.promote_types(dt.uint32, dt.float8_e5m2)
    x = dt.zeros(2, dtype=dt.uint16)
    assert dt.result_type(x, 1) is dt.uint16 and dt.result_type(x, 1.0) is dt.float32
    assert dt.result_type(dt.zeros(2, dtype=dt.float8_e5m2), 1.0) is dt.float8_e5m2
    with pytest.raises(RuntimeError, match="Promotion for Float8"):
        dt.cat([dt.zeros(2, dtype=dt.float8_e4m3fn), dt.zeros(2)])


# -- casts: c10's rounding, bit for bit ---------------------------------------------------

def test_float8_casts_hand_values():
    x = dt.tensor([1.5, 300.0, 1000.0, -1e10, float("inf")])
    assert x.to(dt.float8_e4m3fn).tolist() == [1.5, 288.0, 448.0, -448.0, 448.0]   # saturates
    assert bits(dt.tensor([float("nan"), -float("nan")]).to(dt.float8_e5m2)).tolist() == [0x7F, 0xFF]
    # e8m0: an exponent only; half rounds up, except 2**-127 (its 0); sign is dropped
    e = dt.tensor([1.5, 3.0, 1.25, -0.25, 2.0 ** -127, 0.0]).to(dt.float8_e8m0fnu)
    assert bits(e).tolist() == [128, 129, 127, 125, 0, 0]
    assert repr(dt.zeros(2, dtype=dt.float8_e8m0fnu)) == \
        "tensor([0., 0.], dtype=dispatchtorch.float8_e8m0fnu)"
    assert dt.tensor([1.5, 1000.0], dtype=dt.float8_e4m3fn).tolist() == [1.5, 448.0]
    assert dt.full((2,), 1000, dtype=dt.float8_e4m3fn).tolist() == [448.0, 448.0]
    nan_i = dt.tensor([float("nan")], dtype=dt.float8_e4m3fn).to(dt.int64).item()
    assert nan_i == np.iinfo(np.int64).min                    # through float, as c10


@pytest.mark.parametrize("name", ["float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e5m2"])
def test_float8_round_trip_matches_ml_dtypes(name):
    """Where c10 and ml_dtypes agree (finite values), the casts are ml_dtypes'."""
    rng = np.random.default_rng(0)
    v = (rng.standard_normal(4000) * 10.0 ** rng.uniform(-6, 4, 4000)).astype(np.float32)
    md = np.dtype(getattr(ml_dtypes, name))
    v = v[np.abs(v) < float(ml_dtypes.finfo(md).max)]
    got = dt.from_numpy(v).to(getattr(dt, name))
    assert np.array_equal(bits(got), v.astype(md).view(np.uint8))
    assert np.array_equal(got.to(dt.float32).numpy(), v.astype(md).astype(np.float32))


def test_unsigned_casts_wrap_as_c():
    x = dt.tensor([-2.0, 70000.0, 3.7])
    assert x.to(dt.uint16).tolist() == [65534, 4464, 3]
    assert dt.tensor([2 ** 64 - 1], dtype=dt.uint64).to(dt.int64).item() == -1
    assert dt.tensor([1, 65535], dtype=dt.int64).to(dt.uint16).to(dt.int8).tolist() == [1, -1]
    assert dt.tensor([2 ** 64 - 1], dtype=dt.uint64).tolist() == [2 ** 64 - 1]


# -- what runs and what refuses -----------------------------------------------------------

@pytest.mark.parametrize("name", BARE)
def test_storage_ops_run(name):
    d = getattr(dt, name)
    x = dt.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]).to(d)
    assert dt.cat([x, x]).shape == (4, 3) and dt.stack([x, x]).shape == (2, 2, 3)
    assert x.t().contiguous().to(dt.float32).tolist() == [[1, 8], [2, 16], [4, 32]]
    assert x[1, 2].item() == 32 and x[dt.tensor([1, 0])][0, 0].item() == 8
    assert x[dt.tensor([False, True])].shape == (1, 3)
    assert (x == x).all().item() and not (x != x).any().item()
    assert dt.where(x == 2, x, x.flip(0)).to(dt.float32).tolist()[0] == [8, 2, 32]
    y = x.clone()
    y[0] = 4
    y.fill_(2)
    assert y.to(dt.int64).tolist() == [[2, 2, 2], [2, 2, 2]]
    assert (x * x)[0].to(dt.float32).tolist() == [1, 4, 16]
    assert x.isnan().any().item() is False


@pytest.mark.parametrize("name, call, kernel", [
    ("uint16", lambda x: x + x, "add_stub"), ("uint32", lambda x: -x, "neg_cpu"),
    ("uint64", lambda x: x < x, "lt_cpu"), ("uint16", lambda x: x.abs(), "abs_cpu"),
    ("uint16", lambda x: x.max(), "max_all"), ("uint32", lambda x: x.amax(), "max_values_cpu"),
    ("uint16", lambda x: x.masked_fill(x == x, 0), "masked_fill"),
    ("uint16", lambda x: x.nonzero(), "nonzero_count_cpu"), ("uint64", lambda x: x << 1, "lshift_cpu"),
    ("float8_e4m3fn", lambda x: x + x, "add_stub"), ("float8_e5m2", lambda x: x.sum(), "sum_cpu"),
    ("float8_e4m3fn", lambda x: x.exp(), "exp_vml_cpu"), ("float8_e5m2", lambda x: x.sort(),
                                                            "sorting_kernel_method_name"),
    ("float8_e4m3fnuz", lambda x: dt.equal(x, x), "equal_notnan_cpu"),
    ("float8_e8m0fnu", lambda x: x.abs(), "abs_cpu"), ("float8_e5m2", lambda x: x.cumsum(0),
                                                         "cumsum_out_cpu")])
def test_refusals_name_pytorchs_kernel(name, call, kernel):
    d = getattr(dt, name)
    with pytest.raises(NotImplementedError) as e:
        call(dt.tensor([1.0, 2.0]).to(d))
    assert str(e.value) == f"\"{kernel}\" not implemented for '{d.pt_name}'"


@pytest.mark.parametrize("make, kernel", [
    (lambda d: dt.arange(3, dtype=d), "arange_cpu"), (lambda d: dt.linspace(0, 1, 3, dtype=d),
                                                      "linspace_cpu"),
    (lambda d: dt.rand(3, dtype=d), "check_uniform_bounds"),
    (lambda d: dt.randn(3, dtype=d), "normal_kernel_cpu")])
@pytest.mark.parametrize("name", ["uint32", "float8_e5m2"])
def test_factories_refuse(make, kernel, name):
    d = getattr(dt, name)
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for '{d.pt_name}'"):
        make(d)


def test_unsigned_compute_where_pytorch_does():
    x = dt.tensor([4, 9], dtype=dt.uint16)
    assert x.sum().dtype is dt.int64 and x.sum().item() == 13
    assert (x / 2).tolist() == [2.0, 4.5] and x.sqrt().tolist() == [2.0, 3.0]
    assert (x & 1).tolist() == [0, 1] and x.sort().values.tolist() == [4, 9]


def test_numpy_of_float8_raises_and_save_load_keeps_bits(tmp_path):
    with pytest.raises(TypeError, match="Got unsupported ScalarType Float8_e4m3fn"):
        dt.ones(2, dtype=dt.float8_e4m3fn).numpy()
    assert dt.ones(2, dtype=dt.uint32).numpy().dtype == np.uint32
    state = {n: dt.tensor([0.5, -3.0, 448.0, 1e-3]).to(getattr(dt, n)) for n in FLOAT8}
    state.update({n: dt.tensor([1, 2 ** 15], dtype=getattr(dt, n)) for n in UNSIGNED})
    buf = io.BytesIO()
    dt.save(state, buf)
    buf.seek(0)
    back = dt.load(buf)
    for n, t in state.items():
        assert back[n].dtype is t.dtype and np.array_equal(bits(back[n]), bits(t)), n


def test_opencl_declines_the_bare_dtypes():
    try:
        dt.zeros(1, device="opencl")
    except Exception as exc:        # noqa: BLE001
        pytest.skip(f"no OpenCL device here ({exc})")
    with pytest.raises(TypeError, match="device opencl:0 does not support dtype uint16"):
        dt.zeros(2, dtype=dt.uint16, device="opencl")
    with pytest.raises(TypeError, match="does not support dtype float8_e5m2"):
        dt.ones(2, dtype=dt.float8_e5m2).to("opencl")


# -- against PyTorch 2.13 ------------------------------------------------------------------

def _outcome(mod, fn):
    try:
        r = fn(mod)
    except Exception as exc:        # noqa: BLE001
        return type(exc).__name__, str(exc).replace("dispatchtorch.", "torch.")
    if isinstance(r, (mod.Tensor, mod.dtype, mod.finfo, mod.iinfo)):
        # (whitespace collapsed: the longer module name may wrap the dtype suffix)
        r = " ".join(repr(r).replace("dispatchtorch.", "torch.").split())
    return "ok", r


def _m(name):
    return lambda mod: getattr(mod, name)


_CASES = {
    "zeros": lambda m, d: m.zeros(3, dtype=d), "ones": lambda m, d: m.ones(2, dtype=d),
    "full": lambda m, d: m.full((2,), 1.5, dtype=d),
    "tensor": lambda m, d: m.tensor([1, 2, 300], dtype=d),
    "arange": lambda m, d: m.arange(3, dtype=d), "linspace": lambda m, d: m.linspace(0, 1, 3, dtype=d),
    "rand": lambda m, d: m.rand(3, dtype=d), "randn": lambda m, d: m.randn(3, dtype=d),
    "to": lambda m, d: m.tensor([1.5, -2.0, 7e4]).to(d),
    "back": lambda m, d: m.tensor([1.5, 2.0, 3.0]).to(d).to(m.float32),
    "int": lambda m, d: m.tensor([1, 2, 3]).to(d).to(m.int64),
    "copy_": lambda m, d: m.zeros(3, dtype=d).copy_(m.tensor([1.0, 2.0, 3.0])),
    "slice": lambda m, d: m.ones(2, 3).to(d)[:, 1], "index": lambda m, d: m.ones(2, 3).to(d)[1, 2],
    "cat": lambda m, d: m.cat([m.ones(2).to(d), m.zeros(1).to(d)]),
    "cat_mixed": lambda m, d: m.cat([m.ones(2).to(d), m.zeros(1)]),
    "eq": lambda m, d: m.ones(3).to(d) == 1, "ne": lambda m, d: m.ones(3).to(d) != m.ones(3).to(d),
    "lt": lambda m, d: m.ones(3).to(d) < m.ones(3).to(d),
    "add": lambda m, d: m.ones(3).to(d) + m.ones(3).to(d),
    "mul": lambda m, d: m.ones(3).to(d) * m.ones(3).to(d),
    "neg": lambda m, d: -m.ones(3).to(d), "abs": lambda m, d: m.ones(3).to(d).abs(),
    "sum": lambda m, d: m.ones(3).to(d).sum(), "max": lambda m, d: m.ones(3).to(d).max(),
    "amin": lambda m, d: m.ones(3).to(d).amin(0), "argmax": lambda m, d: m.ones(3).to(d).argmax(),
    "sort": lambda m, d: m.ones(3).to(d).sort().values, "any": lambda m, d: m.ones(3).to(d).any(),
    "masked_fill": lambda m, d: m.ones(3).to(d).masked_fill(m.ones(3) == 1, 0),
    "nonzero": lambda m, d: m.ones(3).to(d).nonzero(), "exp": lambda m, d: m.ones(3).to(d).exp(),
    "isnan": lambda m, d: m.ones(3).to(d).isnan(),
    "equal": lambda m, d: m.equal(m.ones(3).to(d), m.tensor([1.0, 1.0, 2.0]).to(d)),
    "equal_self": lambda m, d: (lambda x: m.equal(x, x))(m.ones(3).to(d)),
    "where": lambda m, d: m.where(m.ones(3) == 1, m.ones(3).to(d), m.zeros(3).to(d)),
    "tolist": lambda m, d: m.tensor([0.5, 2.0, 3.0]).to(d).tolist(),
    "item": lambda m, d: m.tensor([3.0]).to(d).item(),
    "promote_f32": lambda m, d: m.promote_types(d, m.float32),
    "promote_i64": lambda m, d: m.promote_types(d, m.int64),
    "result_float": lambda m, d: m.result_type(m.ones(2).to(d), 1.0),
    "finfo": lambda m, d: m.finfo(d), "iinfo": lambda m, d: m.iinfo(d),
    "can_cast": lambda m, d: (m.can_cast(d, m.float32), m.can_cast(m.float32, d)),
    "clamp": lambda m, d: m.ones(3).to(d).clamp(0, 1), "clamp_min": lambda m, d: m.ones(3).to(d).clamp(min=1),
    "logical_not": lambda m, d: m.ones(3).to(d).logical_not(),
    "logical_or": lambda m, d: m.logical_or(m.ones(3).to(d), m.ones(3).to(d)),
    "isinf": lambda m, d: m.ones(3).to(d).isinf(), "isfinite": lambda m, d: m.ones(3).to(d).isfinite(),
    "nan_to_num": lambda m, d: m.ones(3).to(d).nan_to_num(),
    "kthvalue": lambda m, d: m.ones(3).to(d).kthvalue(1).values, "median": lambda m, d: m.ones(3).to(d).median(),
    "matmul": lambda m, d: m.ones(2, 2).to(d) @ m.ones(2, 2).to(d),
    "dot": lambda m, d: m.dot(m.ones(3).to(d), m.ones(3).to(d)),
    "flip_1d": lambda m, d: m.ones(3).to(d).flip(0), "flip_rows": lambda m, d: m.ones(2, 3).to(d).flip(0),
    "flip_cols": lambda m, d: m.ones(2, 3).to(d).flip(1),
    "index_select_1d": lambda m, d: m.ones(3).to(d).index_select(0, m.tensor([1])),
    "index_select_2d": lambda m, d: m.ones(2, 3).to(d).index_select(0, m.tensor([1])),
    "setitem_index": lambda m, d: m.ones(3).to(d).__setitem__(m.tensor([0]), 5),
    "setitem_mask": lambda m, d: m.ones(3).to(d).__setitem__(m.tensor([True, False, True]), 5),
    "setitem_int": lambda m, d: m.ones(3).to(d).__setitem__(1, 5),
    "softmax": lambda m, d: m.softmax(m.ones(3).to(d), 0), "isclose": lambda m, d: m.isclose(m.ones(3).to(d), m.ones(3).to(d)),
    "lerp": lambda m, d: m.lerp(m.ones(3).to(d), m.ones(3).to(d), 0.5), "std": lambda m, d: m.ones(3).to(d).std(),
    "gather": lambda m, d: m.ones(3).to(d).gather(0, m.tensor([0])), "take": lambda m, d: m.ones(3).to(d).take(m.tensor([0])),
    "masked_select": lambda m, d: m.ones(3).to(d).masked_select(m.tensor([True, False, True])),
    "unique": lambda m, d: m.unique(m.ones(3).to(d)), "cumsum": lambda m, d: m.ones(3).to(d).cumsum(0),
    "triu": lambda m, d: m.ones(2, 2).to(d).triu(), "topk": lambda m, d: m.ones(3).to(d).topk(1).values,
    "div": lambda m, d: m.ones(3).to(d) / m.ones(3).to(d), "bitwise_and": lambda m, d: m.ones(3).to(d) & m.ones(3).to(d),
    "randint": lambda m, d: m.randint(0, 1, (3,), dtype=d), "randperm": lambda m, d: m.randperm(1, dtype=d),
    "eye": lambda m, d: m.eye(2, dtype=d), "prod": lambda m, d: m.ones(3).to(d).prod(),
    "var_dim": lambda m, d: m.ones(3).to(d).var(0), "log_softmax": lambda m, d: m.log_softmax(m.ones(3).to(d), 0),
    "isposinf": lambda m, d: m.ones(3).to(d).isposinf(), "mean_dim": lambda m, d: m.ones(3).to(d).mean(0),
    "mm": lambda m, d: m.mm(m.ones(2, 2).to(d), m.ones(2, 2).to(d)),
    "view_bytes": lambda m, d: m.tensor([1.5, 2.0, 448.0]).to(d).view(m.uint8),
    "from_bytes": lambda m, d: m.arange(16, dtype=m.uint8).view(d)[:3].to(m.float64),
    "storage_nbytes": lambda m, d: m.ones(3).to(d).untyped_storage().nbytes(),
}


@needs_torch
@pytest.mark.parametrize("case", list(_CASES))
@pytest.mark.parametrize("name", BARE)
def test_matches_pytorch(name, case):
    fn = _CASES[case]
    ours = _outcome(dt, lambda m: fn(m, getattr(m, name)))
    theirs = _outcome(TORCH, lambda m: fn(m, getattr(m, name)))
    if case in ("rand", "randn") and theirs[0] == "ok":
        pytest.skip("random values differ by generator")
    assert ours == theirs


@needs_torch
@pytest.mark.parametrize("name", FLOAT8)
def test_casts_bit_exact_with_pytorch(name):
    rng = np.random.default_rng(1)
    f32 = rng.integers(0, 2 ** 32, 100000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f64 = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.uniform(-40, 40, 2000),
                          [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -127, 464.0, 61440.0]])
    for src in (f32, f64, np.arange(-600, 600, dtype=np.int64)):
        ours = bits(dt.from_numpy(src).to(getattr(dt, name)))
        theirs = TORCH.from_numpy(src).to(getattr(TORCH, name)).view(TORCH.uint8).numpy()
        assert np.array_equal(ours, theirs), src.dtype
    pattern = np.arange(256, dtype=np.uint8)
    back = TORCH.from_numpy(pattern).view(getattr(TORCH, name))
    ours = dt.from_numpy(pattern.view(getattr(ml_dtypes, name)))
    for target in ("float32", "int64", "uint8", "bool"):
        with np.errstate(all="ignore"):
            assert np.array_equal(ours.to(getattr(dt, target)).numpy(),
                                  back.to(getattr(TORCH, target)).numpy(), equal_nan=True), target


@needs_torch
@pytest.mark.parametrize("name", BARE)
def test_repr_matches_pytorch(name):
    for values in ([1.5, 2.0, 300.0], [0.0, 1.0], [], [2.0 ** -20, 8.0]):
        ours = repr(dt.tensor(values).to(getattr(dt, name)))
        theirs = repr(TORCH.tensor(values).to(getattr(TORCH, name)))
        assert ours == theirs.replace("torch.", "dispatchtorch."), values
