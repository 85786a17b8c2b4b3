"""The CPU backend's multi-threaded kernels for large arrays (threaded.py) give
numpy's single-call results: elementwise ops bit for bit, reductions to float32
rounding, matmul to BLAS rounding; the size threshold keeps small arrays on one call."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu import parallel as P
from dispatchtorch_cpu import threaded as T
from dispatchtorch_cpu.kernels import KERNELS

rng = np.random.default_rng(3)
BIG = (P.THRESHOLD * 3 // 512 + 7, 512)          # over the threshold, ragged chunks


@pytest.fixture(params=[2, 3])
def threads(request):
    old = P.POOL.threads
    P.POOL.resize(request.param)
    yield request.param
    P.POOL.resize(old)


UNARY = {"exp": np.exp, "sqrt": np.sqrt, "tanh": np.tanh, "neg": np.negative, "abs": np.abs}
BINARY = {"add": np.add, "mul": np.multiply, "div": np.true_divide, "maximum": np.maximum,
          "lt": np.less}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_equals_numpy(name, threads):
    x = rng.random(BIG, dtype=np.float32) + 0.5
    got = np.empty_like(x)
    KERNELS[name](got, x)
    assert np.array_equal(got, UNARY[name](x))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_equals_numpy_including_in_place_and_views(name, threads):
    a = rng.standard_normal(BIG, dtype=np.float32)
    b = rng.standard_normal(BIG[::-1], dtype=np.float32).T        # a transposed view
    want = BINARY[name](a, b)
    got = np.empty_like(want)
    KERNELS[name](got, a, b)
    assert np.array_equal(got, want)
    if name != "lt":
        KERNELS[name](a, a, b)                                      # out aliases an input
        assert np.array_equal(a, want)


def test_large_arrays_are_cut_into_chunks(threads):
    calls = []

    def kernel(out, x):
        calls.append(out.shape)
        out[...] = x
    x = rng.random(BIG, dtype=np.float32)
    out = np.empty_like(x)
    T.chunked(kernel, out, (x,))
    assert len(calls) > 1 and sum(np.prod(c) for c in calls) == x.size
    assert np.array_equal(out, x)


@pytest.mark.parametrize("shape", [(P.THRESHOLD,), (P.THRESHOLD + 1,), (4, 256, 257),
                                   (3, P.THRESHOLD // 3 + 5), (T.PIECE_MAX * 5 + 3,)])
def test_chunks_are_equal_two_a_thread_and_cover_every_element(shape, threads):
    """Contiguous operands are cut flat into equal chunks, two a thread (a multiple of
    the threads) of at most PIECE_MAX elements and at least PIECE_MIN; the results are
    numpy's bits on any thread count, and a non-contiguous output is cut along an axis."""
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    sizes = []

    def add(out, x, y):
        sizes.append(out.size)
        np.add(x, y, out)
    out = np.empty_like(a)
    T.chunked(add, out, (a, b))
    assert np.array_equal(out, a + b) and sum(sizes) == a.size
    assert max(sizes) - min(sizes) <= 1 and T.PIECE_MIN <= min(sizes) <= max(sizes) <= T.PIECE_MAX + 1
    if a.size >= 2 * threads * T.PIECE_MIN:
        assert len(sizes) % threads == 0 and len(sizes) >= 2 * threads
    else:
        assert len(sizes) == a.size // T.PIECE_MIN
    fortran = np.asfortranarray(np.empty_like(a))          # cut along an axis, not flat
    T.chunked(add, fortran, (a, b))
    assert np.array_equal(fortran, a + b)


def test_integer_division_by_zero_raises_from_a_chunk(threads):
    a = np.ones(P.THRESHOLD * 2, np.int64)
    b = np.ones_like(a)
    b[-1] = 0
    with pytest.raises(ZeroDivisionError):
        KERNELS["div"](np.empty_like(a), a, b)


@pytest.mark.parametrize("name,dims,keepdim", [("sum", (0, 1), False), ("sum", (1,), True),
                                               ("prod", (0, 1), False), ("amax", (0, 1), True),
                                               ("amin", (1,), False), ("sum", (0,), False)])
def test_reductions_equal_numpy(name, dims, keepdim, threads):
    x = (rng.random(BIG, dtype=np.float32) * 0.01 + 0.995) if name == "prod" else \
        rng.standard_normal(BIG, dtype=np.float32)
    shape = tuple(1 if d in dims else n for d, n in enumerate(BIG)) if keepdim else \
        tuple(n for d, n in enumerate(BIG) if d not in dims)
    got = np.empty(shape, np.float32)
    KERNELS[name](got, x, dims=dims, keepdim=keepdim)
    want = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}[name](
        x, axis=dims, keepdims=keepdim)
    exact = x.astype(np.float64)
    ref = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}[name](
        exact, axis=dims, keepdims=keepdim)
    rtol = 3e-4 if name == "prod" else 2e-5      # 786k float32 roundings in a row
    # a sum's rounding scales with the sum of |terms|, not with the (cancelled) result
    scale = np.abs(exact).sum(axis=dims).max() if name == "sum" else np.abs(ref).max()
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=3e-7 * scale + rtol * np.abs(ref).max())
    np.testing.assert_allclose(got, want, rtol=rtol, atol=3e-7 * scale + rtol * np.abs(ref).max())


def test_nan_propagates_through_partial_maxima(threads):
    x = rng.standard_normal(P.THRESHOLD * 2, dtype=np.float32)
    x[12345] = np.nan
    out = np.empty((), np.float32)
    KERNELS["amax"](out, x, dims=(0,), keepdim=False)
    assert np.isnan(out)


@pytest.mark.parametrize("shapes", [((300, 256), (256, 200)), ((6, 64, 128), (6, 128, 96)),
                                    ((6, 64, 128), (128, 96))])
def test_matmul_equals_numpy(shapes, threads):
    a = rng.standard_normal(shapes[0], dtype=np.float32)
    b = rng.standard_normal(shapes[1], dtype=np.float32)
    out = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]),
                   np.float32)
    old = T.MATMUL_THRESHOLD
    T.MATMUL_THRESHOLD = 1
    try:
        T.matmul(KERNELS["matmul"])(out, a, b)
    finally:
        T.MATMUL_THRESHOLD = old
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_small_arrays_take_one_call():
    calls = []

    def kernel(out, x):
        calls.append(out.shape)
    T.elementwise(kernel)(np.empty(10), np.empty(10))
    assert calls == [(10,)]


def test_pool_runs_every_chunk_once_and_reraises():
    seen = []
    P.POOL.run(50, seen.append)
    assert sorted(seen) == list(range(50))

    def boom(i):
        if i == 7:
            raise ValueError("chunk 7")
    with pytest.raises(ValueError, match="chunk 7"):
        P.POOL.run(20, boom)


def test_pool_keeps_no_array_of_a_finished_op(threads):
    """The pool and its workers drop a run's job (whose closure holds the op's arrays)
    when it is done: a large output kept until the next run made each call's output
    take fresh pages (150-200 page faults a 4M-element add on 2 threads)."""
    import time
    import weakref
    x = rng.random(BIG, dtype=np.float32)
    out = np.empty_like(x)
    T.chunked(lambda o, a: np.negative(a, out=o), out, (x,))
    assert np.array_equal(out, -x)
    alive = weakref.ref(out)
    del out
    deadline = time.monotonic() + 5          # a worker drops its reference after leaving
    while alive() is not None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert alive() is None


def test_set_num_threads_sizes_the_pool():
    import dispatchtorch as dt
    old = dt.get_num_threads()
    try:
        dt.set_num_threads(1)
        assert dt.get_num_threads() == 1 and P.POOL.threads == 1
        x = dt.randn(P.THRESHOLD * 2)
        np.testing.assert_array_equal(dt.exp(x).numpy(), np.exp(x.numpy()))
    finally:
        dt.set_num_threads(old)


@pytest.mark.parametrize("size", [P.THRESHOLD, P.THRESHOLD * 3 + 1023, P.THRESHOLD * 5 + 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_full_sum_of_large_arrays_matches_float64(size, dtype, threads):
    """The blocked full float sum (by columns, then the partials pairwise) accumulates
    in x's dtype and stays within a few ulp of the float64 sum, ragged tails included."""
    x = rng.random(size).astype(dtype)
    out = np.empty((), dtype)
    KERNELS["sum"](out, x, dims=(0,), keepdim=False)
    assert out.dtype == dtype
    exact = x.astype(np.float64).sum()
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    assert abs(float(out) - exact) <= rtol * exact
    mixed = rng.standard_normal(size).astype(dtype)
    KERNELS["sum"](out, mixed, dims=(0,), keepdim=False)
    assert abs(float(out) - mixed.astype(np.float64).sum()) <= rtol * np.abs(mixed).sum()


@pytest.mark.parametrize("special,want", [((np.inf,), np.inf), ((np.inf, -np.inf), np.nan),
                                          ((np.nan,), np.nan), ((-np.inf,), -np.inf)])
def test_full_sum_propagates_infinities_and_nan(special, want, threads):
    x = np.ones(P.THRESHOLD * 2 + 3, np.float32)
    for i, v in enumerate(special):
        x[1000 + 700000 * i % x.size] = v
    x[-1] = special[-1]                                   # in the ragged tail too
    out = np.empty((), np.float32)
    KERNELS["sum"](out, x, dims=(0,), keepdim=False)
    np.testing.assert_array_equal(out, np.float32(want))


def _full_sum(x, threads):
    old = P.POOL.threads
    P.POOL.resize(threads)
    try:
        out = np.empty((), x.dtype)
        KERNELS["sum"](out, x, dims=tuple(range(x.ndim)), keepdim=False)
        return out
    finally:
        P.POOL.resize(old)


class _Way:
    """A stand-in for threaded.SUM_CHOICE that always takes one way (0: one call,
    1: the pool's tasks)."""

    def __init__(self, way):
        self.way = way

    def run(self, key, first, second, *args):
        (second if self.way else first)(*args)


def _rows_only(monkeypatch):
    """The full sum as it runs without a C compiler: threaded.py's row sums."""
    monkeypatch.setattr(T.c_sum, "available", lambda dtype: False)


def _needs_c():
    if not T.c_sum.available(np.dtype(np.float32)):
        pytest.skip("no C compiler: the full sum runs as row sums")


@pytest.fixture(params=[("c", None), ("c", 0), ("c", 1), ("rows", None), ("rows", 0),
                        ("rows", 1)],
                ids=["c-timed", "c-one_thread", "c-team", "rows-timed", "rows-one_call",
                     "rows-pool_tasks"])
def sum_way(request, monkeypatch):
    """The full sum by c_sum.py's C blocks or by the row sums, each on the way
    timed_choice picks or pinned to one (0: one thread, 1: the pool's thread count)."""
    engine, way = request.param
    if engine == "rows":
        _rows_only(monkeypatch)
    else:
        _needs_c()
    if way is not None:
        monkeypatch.setattr(T, "SUM_CHOICE", _Way(way))
    return request.param


@pytest.mark.parametrize("size", [P.THRESHOLD, P.THRESHOLD * 3 + T.SUM_ROW * 5 + 17,
                                  P.THRESHOLD * 8 + 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_full_sum_is_the_same_on_any_thread_count(size, dtype, sum_way):
    """The row sums and their pairwise combination run in one fixed order whoever
    takes a task: 1, 2 or 3 threads, one call or the pool's tasks, give the same bits,
    within a few ulp of the float64 sum."""
    x = rng.standard_normal(size).astype(dtype)
    one = _full_sum(x, 1)
    assert _full_sum(x, 2).tobytes() == one.tobytes() == _full_sum(x, 3).tobytes()
    exact = x.astype(np.float64).sum()
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    assert abs(float(one) - exact) <= rtol * np.abs(x).sum()


@pytest.mark.parametrize("gemv_max", [0, 1 << 30], ids=["einsum", "gemv"])
def test_full_sum_tasks_split_the_rows(monkeypatch, gemv_max):
    """The pool's way really cuts the rows over the threads (the identity above is
    not one call compared with itself), on multiples of _SUM_ALIGN rows, with either
    row loop (einsum for arrays over GEMV_MAX_BYTES, gemv up to it)."""
    _rows_only(monkeypatch)
    monkeypatch.setattr(T, "SUM_CHOICE", _Way(1))
    monkeypatch.setattr(T, "GEMV_MAX_BYTES", gemv_max)
    cuts = []
    real_einsum, real_matmul = np.einsum, np.matmul

    def einsum(spec, a, out):
        cuts.append(("einsum", out.shape[0]))
        return real_einsum(spec, a, out=out)

    def matmul(a, b, out):
        cuts.append(("gemv", out.shape[0]))
        return real_matmul(a, b, out=out)
    monkeypatch.setattr(T, "_einsum", einsum)
    monkeypatch.setattr(T, "_matmul", matmul)
    x = rng.standard_normal(P.THRESHOLD * 3 + 77).astype(np.float32)
    want = _full_sum(x, 1)
    cuts.clear()
    got = _full_sum(x, 3)
    kind = "gemv" if gemv_max else "einsum"
    assert len(cuts) == 3 and all(k == kind for k, _ in cuts)
    assert all(c % T._SUM_ALIGN == 0 for _, c in cuts[:-1])
    assert sum(c for _, c in cuts) == x.size // T.SUM_ROW and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("value", [1.1, 0.3, 0.7])
@pytest.mark.parametrize("threads", [1, 2])
def test_full_sum_of_constants_is_as_accurate_as_numpys_pairwise(value, threads, sum_way):
    """Constant terms make a sequential float32 sum drift linearly (1e-5 relative over
    2M terms); the row sums keep within a few ulp, as numpy's pairwise loop does."""
    x = np.full(P.THRESHOLD * 8 + 5, value, np.float32)
    exact = x.astype(np.float64).sum()
    numpy_err = abs(float(np.add.reduce(x)) - exact)
    ours_err = abs(float(_full_sum(x, threads)) - exact)
    assert ours_err <= max(4 * numpy_err, 4e-7 * exact)


@pytest.mark.parametrize("threads", [1, 2])
def test_sums_of_views_and_over_dims_of_large_arrays(threads):
    """Non-contiguous inputs (a transpose, a strided slice) and partial reductions take
    the chunked or the single-call path and match the float64 sums."""
    x = rng.standard_normal((1100, 700)).astype(np.float32)
    cases = [(x.T, (0, 1)), (x[:, ::2], (0, 1)), (x, (0,)), (x, (1,)), (x.T, (1,))]
    old = P.POOL.threads
    P.POOL.resize(threads)
    try:
        for view, dims in cases:
            shape = tuple(n for d, n in enumerate(view.shape) if d not in dims)
            out = np.empty(shape, np.float32)
            KERNELS["sum"](out, view, dims=dims, keepdim=False)
            exact = view.astype(np.float64)
            np.testing.assert_allclose(out, exact.sum(axis=dims),
                                       atol=2e-7 * np.abs(exact).sum(axis=dims).max())
    finally:
        P.POOL.resize(old)


def _adversarial(i, n):
    """Many equal values and a few large ones (the drift a sequential sum shows), many
    equal values and 2000 of 1e3-1e5, or uniform values near 10."""
    kind = i % 3
    if kind == 2:
        return (10 + rng.random(n)).astype(np.float32)
    x = np.full(n, [0.1, 1 / 3, 0.7, 1.1][i % 4], np.float32)
    if kind == 0:
        x[rng.integers(0, n, 20)] = [1e6, 3e4][i % 2]
    else:
        x[rng.integers(0, n, 2000)] = rng.uniform(1e3, 1e5, 2000)
    return x


@pytest.mark.parametrize("gemv_max", [0, 1 << 30, None], ids=["einsum", "gemv", "c"])
def test_full_sum_error_stays_near_numpys_pairwise_sum(monkeypatch, gemv_max):
    """Against the float64 sum, over twelve adversarial arrays: the rows' error, summed
    by einsum or by gemv, is within 1.5x numpy's pairwise float32 sum's on average
    (over 48 arrays einsum 1.04x, gemv 0.97x) and no larger than PyTorch's own sum's
    (2.02x numpy's; one sequential float32 pass: ~10^4-10^5x)."""
    torch = pytest.importorskip("torch")
    if gemv_max is None:
        _needs_c()
    else:
        _rows_only(monkeypatch)
        monkeypatch.setattr(T, "GEMV_MAX_BYTES", gemv_max)
    ours, numpys, torchs = [], [], []
    for i in range(12):
        x = _adversarial(i, (1 << 21) + 1000 * i + 3)
        exact = np.add.reduce(x.astype(np.float64))
        scale = np.add.reduce(np.abs(x.astype(np.float64)))
        ours.append(abs(float(_full_sum(x, 2)) - exact) / scale)
        numpys.append(abs(float(np.add.reduce(x)) - exact) / scale)
        torchs.append(abs(float(torch.from_numpy(x).sum()) - exact) / scale)
    assert sum(ours) <= 1.5 * sum(numpys)
    assert sum(ours) <= sum(torchs)


def test_full_sum_special_values_as_pytorch(sum_way):
    """-0.0 terms sum to +0.0 (PyTorch: torch.zeros(n).neg().sum() is 0.), infinities
    and NaN propagate, small and large, on one call or the pool's tasks."""
    torch = pytest.importorskip("torch")
    n = P.THRESHOLD * 8 + 7
    cases = {"neg_zero": np.full(n, -0.0, np.float32)}
    for name, vals in {"inf": [np.inf], "ninf": [-np.inf], "inf_ninf": [np.inf, -np.inf],
                       "nan": [np.nan]}.items():
        x = np.ones(n, np.float32)
        x[[1000 + 700001 * i for i in range(len(vals))]] = vals
        cases[name] = x
    old = dt.get_num_threads()
    dt.set_num_threads(2)
    try:
        for name, x in cases.items():
            for arr in (x, x[:10]):
                got = dt.tensor(arr).sum().numpy()
                want = torch.tensor(arr).sum().numpy()
                assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), name
        assert dt.zeros(n).neg().sum().numpy().tobytes() == torch.zeros(n).neg().sum().numpy().tobytes()
    finally:
        dt.set_num_threads(old)
