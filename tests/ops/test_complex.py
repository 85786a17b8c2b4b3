"""complex64 / complex128 through the frontend and the CPU backend, against PyTorch."""
import io

import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128")


def close(ours, theirs, rtol=1e-5, atol=1e-6):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    expected = theirs.detach().resolve_conj().resolve_neg().numpy()
    np.testing.assert_allclose(np.asarray(ours.detach()), expected, rtol=rtol, atol=atol)


def both(fn):
    return fn(dt), fn(torch)


def test_dtype_attributes_and_names():
    for name in ("complex64", "complex128", "cfloat", "cdouble"):
        d, t = getattr(dt, name), getattr(torch, name)
        assert d.is_complex and not d.is_floating_point and d.itemsize == t.itemsize
        assert str(d).split(".")[-1] == str(t).split(".")[-1]
        assert d.to_real().name == str(t.to_real()).split(".")[-1]
    assert dt.float64.to_complex() is dt.complex128
    assert dt.finfo(dt.complex64).eps == torch.finfo(torch.complex64).eps


def test_promote_types_table_matches_pytorch():
    for a in NAMES:
        for b in NAMES:
            ours = dt.promote_types(getattr(dt, a if a != "bool" else "bool"), getattr(dt, b))
            theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert ours.name == str(theirs).split(".")[-1], (a, b)


@pytest.mark.parametrize("name", ["bool", "int64", "float32", "float64", "complex64",
                                  "complex128"])
def test_result_type_with_complex_scalars_and_0d(name):
    for other in (1j, 2.5, 3, True):
        ours = dt.result_type(dt.ones(2, dtype=getattr(dt, name)), other)
        theirs = torch.result_type(torch.ones(2, dtype=getattr(torch, name)), other)
        assert ours.name == str(theirs).split(".")[-1], (name, other)
    # a 0-d complex128 tensor with a float32 tensor: precision from the float tensor
    ours = dt.result_type(dt.ones(2), dt.tensor(1j, dtype=dt.complex128))
    theirs = torch.result_type(torch.ones(2), torch.tensor(1j, dtype=torch.complex128))
    assert ours.name == str(theirs).split(".")[-1]


def test_creation_and_printing_match_pytorch():
    cases = [lambda m: m.tensor([1 + 2j, 3.5 - 1j]), lambda m: m.tensor(1 + 2j),
             lambda m: m.tensor([[1e-5 + 1j, 100 + 2j]], dtype=m.cdouble),
             lambda m: m.zeros(2, 3, dtype=m.cfloat), lambda m: m.ones(2, dtype=m.complex128),
             lambda m: m.full((2,), 1 - 2j), lambda m: m.tensor([1, 2.5]).to(m.cfloat),
             lambda m: m.tensor([1, 2.5]).cfloat(), lambda m: m.tensor([3j]).cdouble(),
             lambda m: m.tensor([[0.5j, -1], [float("inf"), 2]], dtype=m.cfloat),
             lambda m: m.linspace(1 + 2j, -3, 5), lambda m: m.linspace(0, 4, 3, dtype=m.cdouble)]
    for case in cases:
        ours, theirs = both(case)
        assert repr(ours).replace("dispatchtorch.", "torch.") == repr(theirs)
    for fn in (lambda m: m.randn(5, dtype=m.cfloat), lambda m: m.rand(3, dtype=m.cdouble),
               lambda m: m.randn(20, dtype=m.cdouble)):
        dt.manual_seed(3)
        torch.manual_seed(3)
        close(*both(fn))


def test_item_tolist_numpy_dlpack_and_save():
    z = dt.tensor([[1 + 2j, -0.5j]])
    assert z.tolist() == torch.tensor([[1 + 2j, -0.5j]]).tolist()
    assert z[0, 0].item() == 1 + 2j and complex(z[0, 1]) == -0.5j
    assert np.asarray(z).dtype == np.complex64
    back = dt.from_dlpack(np.asarray(z))
    assert back.dtype is dt.complex64 and back.tolist() == z.tolist()
    buf = io.BytesIO()
    dt.save({"z": z}, buf)
    buf.seek(0)
    assert dt.load(buf)["z"].tolist() == z.tolist()


def test_views_alias_memory_as_pytorch():
    z = dt.tensor([1 + 2j, 3 - 4j])
    r = dt.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype is dt.float32
    z.real[0] = 10.0
    z.imag.mul_(2)
    assert z.tolist() == [10 + 4j, 3 - 8j] and r.tolist() == [[10, 4], [3, -8]]
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = dt.view_as_complex(x)
    c.mul_(1j)
    assert x.tolist() == [[-2.0, 1.0], [-4.0, 3.0]]
    assert dt.real(x) is x
    z.real = dt.tensor([7.0, 8.0])
    assert z.tolist() == [7 + 4j, 8 - 8j]
    close(dt.view_as_real(z[1:]), torch.view_as_real(torch.tensor([7 + 4j, 8 - 8j])[1:]))


def test_view_as_complex_errors_as_pytorch():
    for bad in (lambda m: m.view_as_complex(m.ones(3, 3)),
                lambda m: m.view_as_complex(m.ones(2, 2).t()),
                lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64)),
                lambda m: m.view_as_real(m.ones(2)),
                lambda m: m.view_as_real(m.ones(2, dtype=m.cfloat).conj()),
                lambda m: m.imag(m.ones(2))):
        with pytest.raises(RuntimeError) as theirs:
            bad(torch)
        with pytest.raises(RuntimeError) as ours:
            bad(dt)
        assert str(ours.value).split()[:3] == str(theirs.value).split()[:3]


def test_conj_bit_as_users_see_it():
    ours, theirs = both(lambda m: m.tensor([1 + 1j, 2 - 3j]))
    for f in (lambda x: x.conj().is_conj(), lambda x: x.conj().conj().is_conj(),
              lambda x: x.conj().resolve_conj().is_conj(), lambda x: x.is_conj(),
              lambda x: x.conj_physical().is_conj(), lambda x: x.real.is_conj(),
              lambda x: x.abs().conj().is_conj()):
        assert f(ours) == f(theirs)
    close(ours.conj(), theirs.conj())
    close(ours.conj().imag, theirs.conj().imag)
    close(ours.conj_physical(), theirs.conj_physical())
    close(dt.conj(dt.ones(2)), torch.conj(torch.ones(2)))


def test_complex_polar_abs_angle_sgn():
    a, b = np.array([1.0, -2.0, 0.0]), np.array([0.5, 3.0, 0.0])
    close(*both(lambda m: m.complex(m.tensor(a), m.tensor(b))))
    close(*both(lambda m: m.complex(m.tensor(a, dtype=m.float64),
                                    m.tensor([1.0], dtype=m.float64))))
    close(*both(lambda m: m.polar(m.tensor(b), m.tensor(a))))
    for f in (lambda m, z: z.abs(), lambda m, z: m.abs(z), lambda m, z: z.angle(),
              lambda m, z: m.sgn(z), lambda m, z: m.angle(m.tensor([-1.0, 2.0]))):
        close(*both(lambda m: f(m, m.tensor([3 + 4j, -1j, 0j, -2 + 0j]))))
    with pytest.raises(RuntimeError, match="Expected object of scalar type"):
        dt.complex(dt.ones(2), dt.ones(2, dtype=dt.float64))


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos",
         "atan", "asinh", "acosh", "atanh", "log1p", "expm1", "log2", "log10", "neg", "reciprocal",
         "rsqrt", "sigmoid", "square", "exp2"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_matches_pytorch(name):
    vals = [0.3 + 0.4j, -1.2 + 0.7j, 2.0 - 1.5j, -0.5 - 0.25j]
    for dtype in ("complex64", "complex128"):
        close(*both(lambda m: getattr(m, name)(m.tensor(vals, dtype=getattr(m, dtype)))),
              rtol=2e-5 if dtype == "complex64" else 1e-10, atol=1e-6)


def test_binary_math_comparisons_and_scalars():
    za, zb = [1 + 2j, -0.5 + 1j, 3 - 1j], [0.5 - 1j, 2 + 0j, -1 - 1j]
    for f in (lambda m, a, b: a + b, lambda m, a, b: a - b, lambda m, a, b: a * b,
              lambda m, a, b: a / b, lambda m, a, b: a ** b, lambda m, a, b: a * 2.5,
              lambda m, a, b: 1j * a, lambda m, a, b: a / 2, lambda m, a, b: a ** 2,
              lambda m, a, b: a == b, lambda m, a, b: a != a, lambda m, a, b: a + m.ones(3),
              lambda m, a, b: m.ones(3, dtype=m.float64) * a, lambda m, a, b: m.ones(3) + 1j,
              lambda m, a, b: m.arange(3) * b, lambda m, a, b: m.where(a == a, a, b),
              lambda m, a, b: a.sum(), lambda m, a, b: a.mean(), lambda m, a, b: a.prod(),
              lambda m, a, b: m.stack([a, b]).sum(0), lambda m, a, b: m.cat([a, b])[2:5],
              lambda m, a, b: m.stack([a, b]).t().contiguous(), lambda m, a, b: a[[2, 0]],
              lambda m, a, b: m.outer(a, b), lambda m, a, b: a.reshape(3, 1) @ b.reshape(1, 3),
              lambda m, a, b: m.stack([a, b, a]) @ m.stack([b, a, a]),
              lambda m, a, b: m.bmm(m.stack([a, b, a]).expand(2, 3, 3), m.stack([b, a, a])
                                    .expand(2, 3, 3)),
              lambda m, a, b: a.clone().add_(b), lambda m, a, b: a.to(m.complex128),
              lambda m, a, b: m.zeros(3, dtype=m.cfloat).copy_(a)):
        close(*both(lambda m: f(m, m.tensor(za), m.tensor(zb))), rtol=1e-5)


def test_ops_without_complex_support_raise_as_pytorch():
    z = [1 + 1j, 2 - 1j]
    for f in (lambda m: m.tensor(z) < 0, lambda m: m.tensor(z).max(), lambda m: m.tensor(z).floor(),
              lambda m: m.atan2(m.tensor(z), m.tensor(z)), lambda m: m.tensor(z).amax()):
        with pytest.raises(NotImplementedError) as theirs:
            f(torch)
        with pytest.raises((NotImplementedError, RuntimeError)) as ours:
            f(dt)
        assert type(ours.value) is type(theirs.value) or isinstance(ours.value, RuntimeError)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dt.ones(2).add_(dt.tensor(z))


def test_opencl_refuses_complex_tensors_by_name():
    if not dt.opencl.is_available():
        pytest.skip("no OpenCL device")
    z = dt.tensor([1 + 2j])
    for call in (lambda: z.to("opencl"), lambda: dt.zeros(2, dtype=dt.cfloat, device="opencl"),
                 lambda: dt.ones(2, device="opencl") * 1j,
                 lambda: dt.view_as_complex(dt.ones(2, 2, device="opencl")),
                 lambda: dt.fft.rfft(dt.ones(4, device="opencl"))):
        with pytest.raises(TypeError, match=r"opencl:0.* does not support dtype complex64"):
            call()
    x = dt.ones(2, 2, device="opencl")
    assert (x * 2).sum().item() == 8.0          # real tensors there are untouched
