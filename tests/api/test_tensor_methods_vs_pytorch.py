"""torch.Tensor's public attributes against PyTorch 2.13's: each one is present here or
listed, with its reason, in docs/dropin.md's "Deliberately absent" table (and none listed
there exists). Beside that, the methods no other test file covers, against PyTorch:
map2_, dim_order, pin_memory / is_pinned, as_subclass, as_strided_scatter,
const_data_ptr, is_distributed, the removed eig / lstsq / solve / symeig, and the torch
functions that go with the new methods."""
import warnings

import numpy as np
import pytest

from tests.api.dropin_absent import documented_absent

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402

DTYPES = ["float32", "float64", "int64"]


def _public_tensor_names():
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))


def test_every_tensor_attribute_is_present_or_documented_absent():
    absent = documented_absent().get("Tensor", set())
    missing = [n for n in _public_tensor_names() if not hasattr(dt.Tensor, n) and n not in absent]
    assert not missing, f"torch.Tensor attributes missing here and not in docs/dropin.md: {missing}"
    stale = sorted(n for n in absent if hasattr(dt.Tensor, n))
    assert not stale, f"docs/dropin.md lists as absent Tensor attributes that exist: {stale}"
    unknown = sorted(n for n in absent if not hasattr(torch.Tensor, n))
    assert not unknown, f"docs/dropin.md lists Tensor attributes PyTorch does not have: {unknown}"


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:      # noqa: BLE001 (the class and text are what is compared)
        return (type(e).__name__, str(e))
    if isinstance(r, (tuple, list)):
        return ("ok", [x.tolist() if hasattr(x, "tolist") else x for x in r])
    return ("ok", r.tolist() if hasattr(r, "tolist") else r)


def _same(fn, text=True):
    theirs, ours = _outcome(lambda: fn(torch)), _outcome(lambda: fn(dt))
    if text or theirs[0] == "ok":
        assert ours == theirs
    else:
        assert ours[0] == theirs[0], (ours, theirs)


# -- torch functions that go with the methods --------------------------------------------------

FUNCTIONS = {
    "is_same_size": lambda lib, d: (lib.is_same_size(lib.ones(2, 3, dtype=d), lib.ones(2, 3)),
                                    lib.is_same_size(lib.ones(2, 3, dtype=d), lib.ones(3, 2))),
    "is_signed": lambda lib, d: lib.is_signed(lib.ones(2, dtype=d)),
    "is_distributed": lambda lib, d: lib.is_distributed(lib.ones(2, dtype=d)),
    "is_nonzero": lambda lib, d: lib.is_nonzero(lib.tensor([3], dtype=d)),
    "narrow_copy": lambda lib, d: lib.narrow_copy(lib.arange(12, dtype=d).reshape(3, 4), 1, 1, 2),
    "unsafe_split_with_sizes": lambda lib, d: lib.unsafe_split_with_sizes(
        lib.arange(7, dtype=d), [2, 5]),
    "resize_as_": lambda lib, d: lib.resize_as_(lib.arange(6, dtype=d), lib.ones(2, 2)),
    "as_strided_": lambda lib, d: lib.as_strided_(lib.arange(6, dtype=d), (2, 2), (1, 2), 1),
    "addmv_": lambda lib, d: lib.addmv_(lib.arange(2, dtype=d), lib.arange(6, dtype=d).reshape(2, 3),
                                        lib.arange(3, dtype=d), beta=2, alpha=3),
    "ldexp_": lambda lib, d: lib.ldexp_(lib.arange(3, dtype=d).to(lib.float64), lib.tensor([1, 2, 3])),
    "i0_": lambda lib, d: lib.i0_(lib.arange(3, dtype=d).to(lib.float64)),
    "conj_physical_": lambda lib, d: lib.conj_physical_(lib.arange(3, dtype=d)),
    "hardshrink": lambda lib, d: lib.hardshrink(lib.arange(-3, 3, dtype=d).double() / 4, 0.5),
    "prelu": lambda lib, d: lib.prelu(lib.arange(-3, 3, dtype=d).double(), lib.tensor([0.25]).double()),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_torch_functions_match_pytorch(name, dtype):
    _same(lambda lib: FUNCTIONS[name](lib, getattr(lib, dtype)))


def test_conj_physical_inplace_on_complex_and_views():
    for lib in (torch, dt):
        z = lib.tensor([1 + 2j, -3 - 1j, 2j])
        v = z[1:]
        r = v.conj_physical_()
        assert r is v
        assert z.tolist() == [1 + 2j, -3 + 1j, -2j]


# -- map2_ -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_map2_values_broadcast_and_order(dtype):
    def run(lib):
        d = getattr(lib, dtype)
        seen = []
        t = lib.arange(6, dtype=d).reshape(2, 3).t()          # a view: logical order
        x, y = lib.arange(3, dtype=d).reshape(3, 1), lib.ones(2, dtype=d) * 10
        r = t.map2_(x, y, lambda a, b, c: seen.append(type(a).__name__) or a + 2 * b - c)
        return r is t, t.tolist(), seen
    assert run(torch) == run(dt)


@pytest.mark.parametrize("method", ["apply_", "map_", "map2_"])
@pytest.mark.parametrize("ret", [2.9, -2.9, 0.0, True, "3", None, 1j, 0j, 300, -1, -255, -256,
                                 128, 2 ** 70, 1e300, "tensor(2)", "tensor(0.5)"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int8", "uint8", "bool"])
def test_python_callable_result_conversion(dtype, ret, method):
    """apply_ / map_ / map2_ store a callable's result as PyTorch converts a Python number
    into the dtype (truncation, wrap of negative ints into unsigned, its overflow and type
    errors), and bump no version."""
    def run(lib):
        d = getattr(lib, dtype)
        t = lib.ones(2, dtype=d)
        r = eval(ret, {"tensor": lib.tensor}) if isinstance(ret, str) and "(" in ret else ret
        others = {"apply_": (), "map_": (lib.ones(2, dtype=d),),
                  "map2_": (lib.ones(2, dtype=d), lib.ones(2, dtype=d))}[method]
        out = getattr(t, method)(*others, lambda *a: r)
        assert t._version == 0
        return out
    _same(run)


def test_map2_errors():
    _same(lambda lib: lib.ones(2).map2_(lib.ones(2), lib.ones(2, dtype=lib.float64), lambda *a: 1))
    _same(lambda lib: lib.ones(2).map2_(lib.ones(2, dtype=lib.int64), lib.ones(2), lambda *a: 1))
    _same(lambda lib: lib.ones(2).map2_(1, lib.ones(2), lambda *a: 1))
    _same(lambda lib: lib.ones(2).map2_(lib.ones(2), lib.ones(2, requires_grad=True), lambda *a: 1))
    _same(lambda lib: lib.ones(2).map2_(lib.ones(3), lib.ones(2), lambda *a: 1), text=False)


# -- dim_order --------------------------------------------------------------------------------------

def _layout(lib, kind):
    base = lib.empty(2, 3, 5, 7)
    return {
        "contiguous": base,
        "transposed": base.transpose(1, 2),
        "permuted": base.permute(3, 0, 2, 1),
        "channels_last": base.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        "singleton": lib.empty(1, 2, 3, 4),
        "expanded": lib.empty(3, 1, 4).expand(3, 5, 4),
        "sliced": base[:, ::2, :, 1:],
        "scalar": lib.tensor(1.0),
        "vector": lib.arange(5.)[::2],
        "square_t": lib.empty(3, 3).t(),
        "zero_stride": lib.empty(4, 1).expand(4, 4).t(),
        "equal_strides": lib.empty(12).as_strided((2, 3), (2, 2)),
    }[kind]


@pytest.mark.parametrize("check", [False, True, []])
@pytest.mark.parametrize("kind", ["contiguous", "transposed", "permuted", "channels_last",
                                  "singleton", "expanded", "sliced", "scalar", "vector",
                                  "square_t", "zero_stride", "equal_strides"])
def test_dim_order(kind, check):
    _same(lambda lib: _layout(lib, kind).dim_order(ambiguity_check=check))


def test_dim_order_errors():
    _same(lambda lib: lib.empty(2, 3).dim_order(ambiguity_check="ILLEGAL"))
    _same(lambda lib: lib.empty(2, 3).dim_order(ambiguity_check=[1]))
    _same(lambda lib: lib.empty(2, 3).dim_order(True), text=False)   # keyword-only
    _same(lambda lib: lib.ones(2, 2).to_sparse().dim_order(), text=False)


# -- pin_memory / is_pinned --------------------------------------------------------------------------

def test_is_pinned_is_false():
    for lib in (torch, dt):
        assert lib.ones(2).is_pinned() is False
        with pytest.warns(DeprecationWarning):
            assert lib.ones(2).is_pinned("cpu") is False


def test_pin_memory_without_an_accelerator_is_pytorchs_error():
    if torch.accelerator.is_available():
        pytest.skip("this PyTorch has an accelerator")
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2).pin_memory()
    if dt.accelerator.is_available():
        t = dt.arange(12.).reshape(3, 4).t().requires_grad_()
        p = t.pin_memory()
        assert p is not t and not p.is_pinned()
        assert (tuple(p.shape), p.stride(), p.tolist()) == (tuple(t.shape), t.stride(), t.tolist())
        p.sum().backward()                                  # differentiable, as _pin_memory
        assert t.grad.tolist() == [[1.0] * 3] * 4
    else:
        with pytest.raises(RuntimeError) as ours:
            dt.ones(2).pin_memory()
        assert str(ours.value) == str(theirs.value)


def test_pin_memory_errors():
    for lib in (torch, dt):
        with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="not an accelerator"):
            lib.ones(2).pin_memory("cpu")
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        dt.ones(2, device="meta").pin_memory()


# -- as_subclass, as_strided_scatter, const_data_ptr, is_distributed ----------------------------

def test_as_subclass():
    def run(lib):
        class Sub(lib.Tensor):
            pass
        x = lib.arange(3.).requires_grad_()
        y = x.as_subclass(Sub)
        (y * lib.tensor([1., 2., 3.])).sum().backward()
        return (type(y).__name__, y.is_leaf, y.requires_grad, y.data_ptr() == x.data_ptr(),
                x.grad.tolist(), repr(lib.tensor(3.).as_subclass(Sub)))
    assert run(torch) == run(dt)
    _same(lambda lib: lib.ones(2).as_subclass(int))


@pytest.mark.parametrize("dtype", DTYPES)
def test_as_strided_scatter_method(dtype):
    _same(lambda lib: lib.zeros(6, dtype=getattr(lib, dtype)).as_strided_scatter(
        lib.arange(1, 5, dtype=getattr(lib, dtype)).reshape(2, 2), (2, 2), (1, 3), 1))


def test_as_strided_scatter_method_src_gradient():
    """src's gradient is PyTorch's; self's is not compared: PyTorch 2.13's formula for it
    (as_strided_scatter_backward) keeps the gradient inside the scattered region and
    zeroes it outside, the reverse of the derivative (pytorch/pytorch#77128's review
    flagged the formula), and dispatchtorch gives the derivative."""
    grads = []
    for lib in (torch, dt):
        a, s = lib.zeros(6, requires_grad=True), lib.ones(2, requires_grad=True)
        a.as_strided_scatter(s, (2,), (2,), 1).backward(lib.arange(6.) + 10)
        grads.append(s.grad.tolist())
    assert grads[0] == grads[1]
    assert a.grad.tolist() == [10.0, 0.0, 12.0, 0.0, 14.0, 15.0]


def test_const_data_ptr_and_is_distributed():
    for lib in (torch, dt):
        t = lib.arange(6.)[2:]
        assert t.const_data_ptr() == t.data_ptr()
        assert t.is_distributed() is False


# -- removed methods ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [("eig", ()), ("eig", (True,)), ("symeig", ()),
                                       ("lstsq", ("m",)), ("solve", ("m",))])
def test_removed_methods_raise_pytorchs_advice(name, args):
    _same(lambda lib: getattr(lib.ones(2, 2), name)(*[lib.ones(2, 2) if a == "m" else a
                                                      for a in args]))


def test_values_of_new_methods_on_float_and_int():
    """A smoke comparison over dtypes of methods whose other tests use one dtype."""
    for dtype in DTYPES:
        _same(lambda lib: lib.arange(6, dtype=getattr(lib, dtype)).reshape(2, 3).narrow_copy(1, 1, 2))
        _same(lambda lib: lib.tensor([[0, 1], [1, 0]], dtype=getattr(lib, dtype)).to_sparse_coo()
              .to_dense())
        _same(lambda lib: np.asarray(lib.ones(3, dtype=getattr(lib, dtype)).is_set_to(
            lib.ones(3, dtype=getattr(lib, dtype)))).item())
