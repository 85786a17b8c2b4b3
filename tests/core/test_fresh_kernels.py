"""The allocating elementwise kernels (`Backend.fresh_kernels`, the CPU's fresh.py): the
frontend's same-shape path lets the ufunc allocate its result. Checked against numpy
(an independent answer) for values, dtype and layout (a C-contiguous result from
transposed, offset and broadcast-expanded operands), against the ordinary kernels
for every listed op and dtype, and for staying off where a wrapper must see the call."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import _dtype as D
from dispatchtorch.dispatch import OPS, record_kernels
from dispatchtorch.ops._elementwise import _SPECS
from dispatchtorch_cpu import fresh as F
from dispatchtorch_cpu.backend import CPUBackend

rng = np.random.default_rng(11)


def _np(t):
    return t.numpy()


def test_results_are_c_contiguous_roots_of_numpy_values_from_any_layout():
    """Kernels always fill a C-contiguous root; an F-ordered first operand makes the
    result that root viewed in F order (PyTorch's TensorIterator layout)."""
    base = rng.standard_normal((5, 4)).astype(np.float32)
    other = rng.standard_normal((4, 5)).astype(np.float32)
    a, b = dt.tensor(base).t(), dt.tensor(other)          # a: an F-ordered view
    for r, want in ((a + b, base.T + other), (a * b, base.T * other),
                    (a - b, base.T - other), (dt.maximum(a, b), np.maximum(base.T, other)),
                    (a < b, base.T < other), (a.exp(), np.exp(base.T)), (-a, -base.T),
                    (dt.tensor(base)[1:, ::2] + dt.tensor(base)[:4, 1::2],
                     base[1:, ::2] + base[:4, 1::2])):
        assert r.dtype == dt.from_numpy(np.empty(0, want.dtype)).dtype
        np.testing.assert_array_equal(_np(r), want)
        root = r if r._base is None else r._base
        h = root._h
        assert root._stride is None and h.flags.c_contiguous and h.size == want.size
        assert r.stride() == ((1, 4) if r.shape == (4, 5) else (2, 1))
    e = dt.tensor([1.0, 2.0]).expand(3, 2)                 # zero strides
    np.testing.assert_array_equal(_np(e + e), np.full((3, 2), [2.0, 4.0], np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_,
                                   np.complex64])
def test_every_listed_kernel_equals_the_ordinary_kernel(dtype):
    kernels, fresh = CPUBackend.kernels, CPUBackend.fresh_kernels
    assert set(fresh) == set(F.UNARY) | set(F.BINARY) | set(F.COMPARE)
    x = (rng.standard_normal((3, 7)) * 3).astype(dtype) if dtype is not np.bool_ else \
        rng.random((3, 7)) < 0.5
    y = (rng.standard_normal((3, 7)) * 3).astype(dtype) if dtype is not np.bool_ else \
        rng.random((3, 7)) < 0.5
    specs = {s.name: s for s in _SPECS}
    d = D.from_numpy_dtype(np.dtype(dtype))
    with np.errstate(all="ignore"):
        for name in fresh:
            if specs[name].table.get(d) is not d:
                continue                    # the frontend never gives the kernel this dtype
            args = (x,) if name in F.UNARY else (x, y)
            out = np.empty(x.shape, np.bool_ if name in F.COMPARE else x.dtype)
            try:
                kernels[name](out, *args)
            except TypeError as exc:                       # no loop for this dtype: same error
                with pytest.raises(TypeError, match=str(exc)[:20].replace("(", r"\(")):
                    fresh[name](*args)
                continue
            got = fresh[name](*args)
            assert got.dtype == out.dtype and got.flags.c_contiguous, name
            np.testing.assert_array_equal(got, out, err_msg=name)


def test_half_precision_and_large_arrays_take_the_ordinary_kernel():
    h = rng.standard_normal(9).astype(np.float16)
    np.testing.assert_array_equal(_np(dt.tensor(h) * dt.tensor(h)),
                                  (h.astype(np.float32) * h.astype(np.float32)).astype(np.float16))
    big = rng.standard_normal(1 << 19).astype(np.float32)
    np.testing.assert_array_equal(_np(dt.tensor(big) + dt.tensor(big)), big + big)


def test_zero_d_operands_and_errors_keep_their_paths():
    r = dt.tensor(2.0) + dt.tensor(3.0)
    assert r.shape == () and float(r) == 5.0 and isinstance(r._h, np.ndarray)
    with pytest.raises(RuntimeError, match="add"):
        dt.ones(3) + dt.ones(4)
    a = dt.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with"):
        a - a


def test_a_recorder_sees_every_call():
    seen = []
    record_kernels(lambda backend, op, handles, on_device: seen.append(op))
    try:
        x = dt.ones(4)
        x + x, x * x, x.exp()
    finally:
        record_kernels(None)
    assert seen == ["add", "mul", "exp"]
    x = dt.ones(4)
    x + x                              # resolved again without the recorder: allocating
    assert any(f is CPUBackend.fresh_kernels["add"] for f in OPS["add"].fresh.values())


def test_an_allocation_failure_inside_the_kernel_names_the_op_and_changes_nothing():
    x = dt.arange(6.0)
    x + x                                             # resolved: the allocating form is in
    op = OPS["add"]
    saved = dict(op.fresh)

    def refuse(a, b):
        raise MemoryError("simulated: device out of memory")
    try:
        for k in op.fresh:
            op.fresh[k] = refuse
        with pytest.raises(dt.backend.BackendError,
                           match=r"^add failed on backend 'cpu'.*out of memory"):
            x + x
    finally:
        op.fresh.clear()
        op.fresh.update(saved)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
