"""torch.library's custom ops against PyTorch 2.13: the same op defined with both libraries
gives the same values, gradients, schema strings and exceptions; meta calls use the fake;
kernels are chosen by the tensors' device; torch.ops.<ns>.<op> calls the def. Every test
defines its ops in namespaces of its own (`ns` fixture), so runs in parallel never meet."""
# no `from __future__ import annotations`: the ops are annotated with local types, as
# PyTorch evaluates string annotations in the module globals only

import itertools
import re
import typing
import uuid
from collections.abc import Sequence
from typing import Optional

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch import library as dlib

torch = pytest.importorskip("torch")
LIBS = {"torch": torch, "dt": dt}
_count = itertools.count()


@pytest.fixture
def ns():
    """A namespace no other test (or worker) uses."""
    return f"t{uuid.uuid4().hex[:8]}_{next(_count)}"


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(a, b, **kw):
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-6, **kw)


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the class and message are what is compared)
        return type(e), str(e)
    raise AssertionError("no exception")


def _norm(msg):
    """Messages with the libraries' own names made equal (the Tensor class, module paths)."""
    msg = re.sub(r"dispatchtorch\._tensor\.Tensor|torch\.Tensor", "Tensor", msg)
    return msg.replace("dispatchtorch", "torch")


# ---- op factories: the same op written against either library --------------------------

def unary(lib, name, body):
    """The custom op `name`, (Tensor x) -> Tensor, computing body(x)."""
    T = lib.Tensor

    def op(x: T) -> T:
        return body(x)
    op.__name__ = name.split("::")[1]
    return lib.library.custom_op(name, op, mutates_args=())


def make_sin(lib, name):
    T = lib.Tensor

    @lib.library.custom_op(name, mutates_args=())
    def numpy_sin(x: T) -> T:
        return lib.from_numpy(np.sin(x.cpu().numpy())).to(x.device)

    @numpy_sin.register_fake
    def _(x):
        return lib.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def make_two(lib, name, log):
    T = lib.Tensor

    @lib.library.custom_op(name, mutates_args=())
    def scale2(x: T, n: int, f: float) -> tuple[T, T]:
        return x * n, x * f

    def setup_context(ctx, inputs, output):
        _, ctx.n, ctx.f = inputs
        log.append(tuple(ctx.needs_input_grad))

    def backward(ctx, g1, g2):
        return g1 * ctx.n + g2 * ctx.f, None, None

    scale2.register_autograd(backward, setup_context=setup_context)
    return scale2


def make_weighted(lib, name):
    T = lib.Tensor

    @lib.library.custom_op(name, mutates_args=())
    def weighted_sum(tensors: list[T], weights: list[float], bias: float = 0.0) -> T:
        return sum(t * w for t, w in zip(tensors, weights)) + bias

    def setup_context(ctx, inputs, output):
        ctx.weights = inputs[1]

    def backward(ctx, g):
        return [g * w for w in ctx.weights], None, None

    weighted_sum.register_autograd(backward, setup_context=setup_context)
    return weighted_sum


def make_add_one_(lib, name):
    T = lib.Tensor

    @lib.library.custom_op(name, mutates_args=("x",))
    def add_one_(x: T) -> None:
        x.add_(1)

    return add_one_


# ---- values, gradients, schemas ---------------------------------------------------------

def test_numpy_sin_values_gradients_and_torch_ops(ns):
    x0 = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    got = {}
    for key, lib in LIBS.items():
        op = make_sin(lib, f"{ns}{key}::numpy_sin")
        x = lib.tensor(x0, requires_grad=True)
        y = op(x)
        y.sum().backward()
        via_ops = getattr(lib.ops, f"{ns}{key}").numpy_sin(x.detach())
        via_default = getattr(lib.ops, f"{ns}{key}").numpy_sin.default(x.detach())
        got[key] = (y, x.grad, via_ops, via_default, y.grad_fn.name(),
                    str(getattr(lib.ops, f"{ns}{key}").numpy_sin.default._schema).split("::")[1])
    for a, b in zip(got["torch"][:4], got["dt"][:4]):
        _same(a, b)
    _same(got["dt"][1], np.cos(x0))
    assert got["torch"][4].replace(ns + "torch", "") == got["dt"][4].replace(ns + "dt", "")
    assert got["torch"][5] == got["dt"][5] == "numpy_sin(Tensor x) -> Tensor"


def test_two_outputs_int_float_args_and_needs_input_grad(ns):
    x0 = np.arange(3, dtype=np.float32)
    res = {}
    for key, lib in LIBS.items():
        log = []
        op = make_two(lib, f"{ns}{key}::scale2", log)
        x = lib.tensor(x0, requires_grad=True)
        p, q = op(x, 2, 0.5)
        (p.sum() + 3 * q.sum()).backward()
        g_both = x.grad.clone()
        x.grad = None
        p, q = op(x, n=3, f=0.25)
        p.sum().backward()                      # q's gradient is materialized as zeros
        res[key] = (p, q, g_both, x.grad, log)
    for a, b in zip(res["torch"][:4], res["dt"][:4]):
        _same(a, b)
    # in setup_context, as in PyTorch, the flag of the op's hidden last input is still there
    assert res["torch"][4] == res["dt"][4] == [(True, False, False, False)] * 2


def test_list_of_tensors_argument_and_gradients(ns):
    a0, b0 = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
    res = {}
    for key, lib in LIBS.items():
        op = make_weighted(lib, f"{ns}{key}::weighted_sum")
        a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0, requires_grad=True)
        out = op([a, b], [0.3, 0.7], bias=1.0)
        (out * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        res[key] = (out, a.grad, b.grad)
    for a, b in zip(res["torch"], res["dt"]):
        _same(a, b)


SIGNATURES = [
    lambda L: (lambda x: None, {"x": L.Tensor, "return": L.Tensor}, ()),
    lambda L: (lambda x, n, f, b, s: None,
               {"x": L.Tensor, "n": int, "f": float, "b": bool, "s": str,
                "return": tuple[L.Tensor, L.Tensor]}, ()),
    lambda L: (lambda a, b, c, h, i, j, k: None,
               {"a": L.Tensor, "b": Optional[L.Tensor], "c": list[L.Tensor], "h": Sequence[int],
                "i": list[float], "j": Optional[int], "k": list[Optional[L.Tensor]],
                "return": None}, ("a", "c")),
    lambda L: (lambda a, dt_, dv: None, {"a": L.Tensor, "dt_": L.dtype, "dv": L.device,
                                         "return": list[L.Tensor]}, "unknown"),
    lambda L: (lambda a, l: None, {"a": L.Tensor, "l": typing.List[int],  # noqa: UP006
                                   "return": tuple[L.Tensor]}, ()),
    lambda L: (lambda a, n: None, {"a": L.Tensor, "n": Optional[Sequence[int]], "return": int},
               ()),
]


def _annotated(fn, ann):
    fn.__annotations__ = ann
    return fn


@pytest.mark.parametrize("i", range(len(SIGNATURES)))
def test_infer_schema_same_strings(i):
    out = {}
    for key, lib in LIBS.items():
        fn, ann, mutates = SIGNATURES[i](lib)
        out[key] = lib.library.infer_schema(_annotated(fn, ann), mutates_args=mutates,
                                            op_name="op")
    assert out["torch"] == out["dt"]


def test_infer_schema_defaults_and_keyword_only():
    out = {}
    for key, lib in LIBS.items():
        T = lib.Tensor

        def f(x: T, y: Optional[T] = None, *, n: int = 3, s: str = "a", f: float = 1.5,
              b: bool = True, d: lib.dtype = lib.float64, dv: lib.device = lib.device("cpu")) -> T:
            return x
        out[key] = lib.library.infer_schema(f, mutates_args=())
    assert out["torch"] == out["dt"]
    assert out["dt"] == ('(Tensor x, Tensor? y=None, *, SymInt n=3, str s="a", float f=1.5, '
                         'bool b=True, ScalarType d=float64, Device dv="cpu") -> Tensor')


# ---- bad definitions: PyTorch's exception classes and messages -------------------------

def _bad_definitions(L, ns):
    T = L.Tensor

    def good(x: T) -> T:
        return x.clone()

    def nint(x: T, n: int) -> T:
        return x

    def dict_arg(x: dict) -> T:
        return x

    def no_ann(x) -> T:
        return x

    def no_ret(x: T):
        return x

    def bad_ret(x: T) -> dict:
        return x

    def tuple_arg(x: tuple[int, int]) -> T:
        return x

    def varargs(*x: T) -> T:
        return x

    def kw_tensor(x: T, *, y: T) -> T:
        return x

    def bad_default(a: T, l: Sequence[int] = (1, 2)) -> T:
        return a

    c = L.library.custom_op
    return {
        "no_sep": lambda: c("foo", good, mutates_args=()),
        "two_seps": lambda: c("a::b::c", good, mutates_args=()),
        "empty_ns": lambda: c("::b", good, mutates_args=()),
        "digit": lambda: c(f"{ns}::1b", good, mutates_args=()),
        "dash": lambda: c("a-b::c", good, mutates_args=()),
        "default_overload": lambda: c(f"{ns}::b.default", good, mutates_args=()),
        "missing_mutates": lambda: c(f"{ns}::m", good),
        "mutates_unknown_name": lambda: c(f"{ns}::z", good, mutates_args=("z",)),
        "mutates_str": lambda: c(f"{ns}::s", good, mutates_args="x"),
        "mutates_int": lambda: c(f"{ns}::i", nint, mutates_args=("n",)),
        "dict_arg": lambda: c(f"{ns}::d", dict_arg, mutates_args=()),
        "no_annotation": lambda: c(f"{ns}::na", no_ann, mutates_args=()),
        "no_return": lambda: c(f"{ns}::nr", no_ret, mutates_args=()),
        "bad_return": lambda: c(f"{ns}::br", bad_ret, mutates_args=()),
        "tuple_arg": lambda: c(f"{ns}::ta", tuple_arg, mutates_args=()),
        "varargs": lambda: c(f"{ns}::va", varargs, mutates_args=()),
        "kwonly_tensor": lambda: c(f"{ns}::kt", kw_tensor, mutates_args=()),
        "bad_default": lambda: c(f"{ns}::bd", bad_default, mutates_args=()),
    }


# the messages compared whole (after _norm); the others by class (PyTorch's come from its
# C++ schema parser, or list every supported annotation type with its repr)
SAME_MESSAGE = {"no_sep", "two_seps", "default_overload", "missing_mutates",
                "mutates_unknown_name", "mutates_str", "mutates_int", "no_annotation",
                "no_return", "varargs", "bad_default"}


@pytest.mark.parametrize("case", sorted(_bad_definitions(dt, "x")))
def test_bad_definitions_raise_as_pytorch(case, ns):
    theirs = _raised(_bad_definitions(torch, ns + "t")[case])
    ours = _raised(_bad_definitions(dt, ns + "d")[case])
    assert ours[0] is theirs[0], (ours, theirs)
    if case in SAME_MESSAGE:
        assert _norm(ours[1]).replace(ns + "d", "NS") == _norm(theirs[1]).replace(ns + "t", "NS")
    else:
        assert ours[1]


def test_call_argument_errors_as_pytorch(ns):
    for key, lib in LIBS.items():
        make_two(lib, f"{ns}{key}::scale2", [])
    calls = [lambda L, op: op(L.ones(1), 1.5, 1.0), lambda L, op: op(L.ones(1)),
             lambda L, op: op(3, 1, 1.0)]
    for call in calls:
        r = {k: _raised(lambda: call(L, getattr(L.ops, f"{ns}{k}").scale2))
             for k, L in LIBS.items()}
        assert r["dt"][0] is r["torch"][0] is RuntimeError
        first = {k: v[1].splitlines()[0].replace(f"{ns}{k}", "NS") for k, v in r.items()}
        assert first["dt"] == first["torch"]


def test_output_aliasing_an_input_refuses(ns):
    for key, lib in LIBS.items():
        ident = unary(lib, f"{ns}{key}::ident", lambda x: x)
        view = unary(lib, f"{ns}{key}::view", lambda x: x[:1])
        for op in (ident, view):
            cls, msg = _raised(lambda: op(lib.zeros(2)))
            assert cls is RuntimeError and "must not also be an input to this custom" in msg


# ---- autograd ---------------------------------------------------------------------------

def test_no_autograd_registered_raises_at_backward(ns):
    msgs = {}
    for key, lib in LIBS.items():
        plain = unary(lib, f"{ns}{key}::plain", lambda x: x * 2)

        y = plain(lib.ones(2, requires_grad=True))
        assert y.requires_grad
        cls, msg = _raised(lambda: y.sum().backward())
        assert cls is RuntimeError
        msgs[key] = msg.replace(f"{ns}{key}", "NS")
        with lib.no_grad():                 # without grad the op runs, no history
            assert not plain(lib.ones(2, requires_grad=True)).requires_grad
    assert msgs["dt"] == msgs["torch"]


def test_mutating_op_bumps_version_and_trips_the_saved_tensor_check(ns):
    res = {}
    for key, lib in LIBS.items():
        op = make_add_one_(lib, f"{ns}{key}::add_one_")
        a = lib.zeros(2)
        v0 = a._version
        op(a)
        v1 = a._version
        w = lib.ones(2, requires_grad=True)
        b = w * 1
        c = b * b
        op(b)
        cls, msg = _raised(lambda: c.sum().backward())
        reg = _raised(lambda: op.register_autograd(lambda ctx, g: g))
        res[key] = (a, v1 - v0, cls, "modified by an inplace operation" in msg, reg[0],
                    str(getattr(lib.ops, f"{ns}{key}").add_one_.default._schema).split("::")[1])
        leaf = lib.ones(2, requires_grad=True)
        op(leaf)                            # the kernel runs below autograd, as PyTorch's
        res[key] += (leaf,)
    _same(res["torch"][0], res["dt"][0])
    _same(res["torch"][-1], res["dt"][-1])
    assert res["torch"][1:6] == res["dt"][1:6] == (2, RuntimeError, True, RuntimeError,
                                                   "add_one_(Tensor(a0!) x) -> ()")


def test_func_grad_through_a_custom_op(ns):
    """torch.func.grad runs the registered backward here; PyTorch 2.13 refuses (its generated
    autograd.Function has no setup_context staticmethod): a program PyTorch runs is unchanged,
    this one is a superset (docs/custom-ops.md)."""
    x0 = np.linspace(-1, 1, 4).astype(np.float32)
    theirs = make_sin(torch, f"{ns}t::numpy_sin")
    cls, msg = _raised(lambda: torch.func.grad(lambda x: theirs(x * 2).sum())(torch.tensor(x0)))
    assert cls is RuntimeError and "setup_context" in msg
    ours = make_sin(dt, f"{ns}d::numpy_sin")
    _same(dt.func.grad(lambda x: ours(x * 2).sum())(dt.tensor(x0)), 2 * np.cos(2 * x0))


def test_compile_runs_the_custom_op_at_every_call(ns):
    """The numpy kernel reads host values: the capture breaks the graph there (the function
    runs eagerly) rather than baking the first call's values in (docs/custom-ops.md)."""
    op = make_sin(dt, f"{ns}::numpy_sin")
    compiled = dt.compile(lambda x: op(x) + 1)
    for seed in (0, 1):
        x = dt.tensor(np.random.default_rng(seed).standard_normal(4).astype(np.float32))
        _same(compiled(x), np.sin(_np(x)) + 1)


def test_compile_of_a_custom_op_written_in_ops(ns):
    @dlib.custom_op(f"{ns}::double_exp", mutates_args=())
    def double_exp(x: dt.Tensor) -> dt.Tensor:
        return dt.exp(x) * 2

    compiled = dt.compile(lambda x: double_exp(x) - 1)
    for seed in (0, 1):
        x = dt.tensor(np.random.default_rng(seed).standard_normal(3).astype(np.float32))
        _same(compiled(x), 2 * np.exp(_np(x)) - 1)


# ---- devices: meta uses the fake, kernels by device type -------------------------------

def test_meta_calls_use_the_fake_or_raise_as_pytorch(ns):
    msgs = {}
    for key, lib in LIBS.items():
        nofake = unary(lib, f"{ns}{key}::nofake", lambda x: x.clone())

        cls, msg = _raised(lambda: nofake(lib.empty(3, device="meta")))
        assert cls is RuntimeError
        msgs[key] = msg.replace(f"{ns}{key}", "NS")

        @lib.library.register_fake(f"{ns}{key}::nofake")
        def _(x):
            return x.new_empty((x.shape[0] * 2,))

        out = nofake(lib.empty(3, device="meta"))
        assert out.device.type == "meta" and tuple(out.shape) == (6,)
        _same(nofake(lib.ones(3)), np.ones(3))    # the real kernel on cpu
    assert msgs["dt"] == msgs["torch"]


def test_kernels_chosen_by_device_type(ns):
    calls = []

    @dlib.custom_op(f"{ns}::which", mutates_args=(), device_types="cpu")
    def which(x: dt.Tensor) -> dt.Tensor:
        calls.append("cpu")
        return x + 1

    @which.register_kernel("meta")
    def _(x):
        calls.append("meta")
        return dt.empty_like(x)

    which(dt.zeros(2))
    which(dt.zeros(2, device="meta"))
    assert calls == ["cpu", "meta"]
    if dt.opencl.is_available():
        cls, msg = _raised(lambda: which(dt.zeros(2, device="opencl")))
        assert cls is NotImplementedError and "opencl" in msg
        dlib.register_kernel(f"{ns}::which", "opencl", lambda x: (calls.append("opencl"), x * 3)[1])
        _same(which(dt.ones(2, device="opencl")), [3, 3])
        assert calls[-1] == "opencl" and which(dt.ones(2, device="opencl")).device.type == "opencl"
    with which.set_kernel_enabled("cpu", False):   # the op's own function: the same here
        which(dt.zeros(2))
    assert calls[-1] == "cpu"


def test_register_kernel_device_type_names_as_pytorch(ns):
    res = {}
    for key, lib in LIBS.items():
        op = unary(lib, f"{ns}{key}::dev", lambda x: x + 1)
        op.register_kernel("mps", lambda x: x + 5)      # accepted, unused on cpu
        res[key] = (op(lib.zeros(1)), _raised(lambda: op.register_kernel("nodev", lambda x: x)))
    _same(res["torch"][0], res["dt"][0])
    assert res["torch"][1] == res["dt"][1]


def test_set_kernel_enabled_falls_back_to_the_definition(ns):
    res = {}
    for key, lib in LIBS.items():
        k = unary(lib, f"{ns}{key}::k", lambda x: x + 1)

        k.register_kernel("cpu", lambda x: x + 10)
        with k.set_kernel_enabled("cpu", False):
            inside = k(lib.zeros(1))
        res[key] = (k(lib.zeros(1)), inside)
    for a, b in zip(res["torch"], res["dt"]):
        _same(a, b)
    _same(res["dt"][0], [10])


def test_factory_op_dispatches_on_its_device_argument(ns):
    res = {}
    for key, lib in LIBS.items():
        @lib.library.custom_op(f"{ns}{key}::make", mutates_args=(), device_types="cpu")
        def make(n: int, device: lib.device) -> lib.Tensor:
            return lib.arange(n, dtype=lib.float32)

        def no_device(n: int) -> lib.Tensor:
            return lib.zeros(n)
        bad = _raised(lambda: lib.library.custom_op(f"{ns}{key}::nd", no_device,
                                                    mutates_args=(), device_types="cpu"))
        res[key] = (make(3, lib.device("cpu")), bad)
    _same(res["torch"][0], res["dt"][0])
    assert res["torch"][1] == res["dt"][1]


# ---- torch.ops ----------------------------------------------------------------------------

def test_torch_ops_paths_and_absences(ns):
    op = make_sin(dt, f"{ns}::numpy_sin")
    packet = getattr(dt.ops, ns).numpy_sin
    assert packet.default._schema == f"{ns}::numpy_sin(Tensor x) -> Tensor"
    assert str(packet) == f"{ns}.numpy_sin" and repr(packet.default) == f"{ns}.numpy_sin.default"
    _same(packet(dt.ones(2)), op(dt.ones(2)))
    with pytest.raises(AttributeError, match="no attribute 'nothere'"):
        getattr(dt.ops, ns).nothere
    with pytest.raises(AttributeError, match="'aten' object has no attribute 'nothere'"):
        dt.ops.aten.nothere         # torch.ops.aten holds packets of this package's rows only
    with pytest.raises(AttributeError, match="no custom op is registered"):
        dt.ops.never_defined_namespace
    assert dt.ops.add is dt.add and callable(dt.ops.sum)   # the internal package is intact


def test_redefinition_replaces_the_op(ns):
    for k in (1, 2):
        dlib.custom_op(f"{ns}::r", lambda x, k=k: x * k, mutates_args=(),
                       schema="(Tensor x) -> Tensor")
    _same(getattr(dt.ops, ns).r(dt.ones(1)), [2])


def test_explicit_schema_must_agree_with_mutates_args(ns):
    for lib in LIBS.values():
        cls, msg = _raised(lambda: lib.library.custom_op(
            f"{ns}{id(lib)}::e", lambda x: None, mutates_args=(), schema="(Tensor(a0!) x) -> ()"))
        assert cls is ValueError and "Please make these consistent" in msg


# ---- opcheck ----------------------------------------------------------------------------

UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")


def test_opcheck_passes_a_correct_op(ns):
    for key, lib in LIBS.items():
        op = make_sin(lib, f"{ns}{key}::numpy_sin")
        r = lib.library.opcheck(op, (lib.randn(3, requires_grad=True),), test_utils=UTILS)
        assert r == dict.fromkeys(UTILS, "SUCCESS")


def test_opcheck_finds_a_wrong_fake_and_an_undeclared_mutation(ns):
    for key, lib in LIBS.items():
        wrongfake = unary(lib, f"{ns}{key}::wrongfake", lambda x: x * 2)
        wrongfake.register_fake(lambda x: x.new_empty((7,)))
        sneaky = unary(lib, f"{ns}{key}::sneaky", lambda x: x.add_(1) * 1)
        sneaky.register_fake(lambda x: lib.empty_like(x))
        for op, test in ((wrongfake, "test_faketensor"), (sneaky, "test_schema")):
            cls, _ = _raised(lambda: lib.library.opcheck(op, (lib.ones(3),), test_utils=test))
            assert cls.__name__ == "OpCheckError", (key, test, cls)
            r = lib.library.opcheck(op, (lib.ones(3),), test_utils=test, raise_exception=False)
            assert isinstance(r[test], Exception)


def test_opcheck_compares_the_backward_with_finite_differences(ns):
    @dlib.custom_op(f"{ns}::badgrad", mutates_args=())
    def badgrad(x: dt.Tensor) -> dt.Tensor:
        return x * x

    badgrad.register_fake(lambda x: dt.empty_like(x))
    badgrad.register_autograd(lambda ctx, g: g)          # should be 2 x g
    with pytest.raises(dlib.OpCheckError, match="finite differences"):
        dlib.opcheck(badgrad, (dt.randn(3, requires_grad=True),), test_utils=UTILS)
    dlib.register_autograd(f"{ns}::badgrad", lambda ctx, g: 2 * ctx.x * g,
                           setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    assert dlib.opcheck(badgrad, (dt.randn(3, requires_grad=True),), test_utils=UTILS)
    with pytest.raises(ValueError, match="test_aot_dispatch_dynamic"):
        dlib.opcheck(badgrad, (dt.randn(3),), test_utils="test_aot_dispatch_dynamic")


def test_opcheck_refuses_an_input_requiring_grad_without_a_formula(ns):
    @dlib.custom_op(f"{ns}::nograd", mutates_args=())
    def nograd(x: dt.Tensor) -> dt.Tensor:
        return x * 2

    nograd.register_fake(lambda x: dt.empty_like(x))
    r = dlib.opcheck(nograd, (dt.randn(3, requires_grad=True),), test_utils=UTILS,
                     raise_exception=False)
    assert r["test_schema"] == r["test_faketensor"] == "SUCCESS"
    assert "no autograd formula" in str(r["test_autograd_registration"])


# ---- the older Library API --------------------------------------------------------------

def test_library_define_and_impl_per_dispatch_key(ns):
    res = {}
    for key, lib in LIBS.items():
        name = f"{ns}{key}"
        L = lib.library.Library(name, "DEF")
        assert L.define("scale(Tensor x, int n=2) -> Tensor") == "scale"
        no_kernel = _raised(lambda: getattr(lib.ops, name).scale(lib.ones(2)))
        L.impl("scale", lambda x, n=2: x * n, "CPU")
        L.impl("scale", lambda x, n=2: lib.empty_like(x), "Meta")
        L.define("twice_sin(Tensor x) -> Tensor")
        L.impl("twice_sin", lambda x: x.sin() * 2, "CompositeImplicitAutograd")
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        getattr(lib.ops, name).twice_sin(x).sum().backward()
        meta = getattr(lib.ops, name).scale(lib.ones(3, device="meta"))
        res[key] = (getattr(lib.ops, name).scale(lib.ones(2)),
                    getattr(lib.ops, name).scale(lib.ones(2), 3), x.grad, no_kernel[0],
                    (meta.device.type, tuple(meta.shape)),
                    _raised(lambda: lib.library.Library(name, "DEF"))[0],
                    _raised(lambda: lib.library.Library(name, "BAD")),
                    _raised(lambda: L.impl("scale", lambda x: x, "BadKey")),
                    _raised(lambda: L.define("scale(Tensor x) -> Tensor"))[0],
                    _raised(lambda: lib.library.Library(name, "IMPL").define("q(Tensor x) -> Tensor"))[0],
                    lib.library.Library(name, "FRAGMENT").define("frag(Tensor x) -> Tensor"))
    for a, b in zip(res["torch"][:3], res["dt"][:3]):
        _same(a, b)
    assert res["torch"][3:] == res["dt"][3:]
    assert res["dt"][3] is NotImplementedError and res["dt"][6] == (ValueError, "Unsupported kind: BAD")


def test_library_autograd_key_and_module_level_define_impl(ns):
    class Double(dt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return getattr(dt.ops, ns).dbl(x)          # below autograd: the CPU kernel

        @staticmethod
        def backward(ctx, g):
            return g * 2

    dlib.define(f"{ns}::dbl", "(Tensor x) -> Tensor")
    dlib.impl(f"{ns}::dbl", "cpu", lambda x: x * 2)
    L = dlib.Library(ns, "FRAGMENT")
    L.impl("dbl", Double.apply, "Autograd")
    x = dt.ones(3, requires_grad=True)
    y = getattr(dt.ops, ns).dbl(x)
    y.sum().backward()
    _same(y, [2, 2, 2])
    _same(x.grad, [2, 2, 2])
    with pytest.raises(RuntimeError, match="define it first"):
        L.impl("undefined_op", lambda x: x, "CPU")


def test_list_return_gets_its_gradients_as_one_list(ns):
    res = {}
    for key, lib in LIBS.items():
        T = lib.Tensor

        @lib.library.custom_op(f"{ns}{key}::split2", mutates_args=())
        def split2(x: T, b: Optional[T]) -> list[T]:
            return [x * 2, x * 3 + (0 if b is None else b)]

        split2.register_autograd(lambda ctx, gs: (gs[0] * 2 + gs[1] * 3, None))
        x = lib.ones(2, requires_grad=True)
        out = split2(x, None)
        (out[0].sum() + 2 * out[1].sum()).backward()
        res[key] = (type(out).__name__, *out, x.grad)
    assert res["torch"][0] == res["dt"][0] == "list"
    for a, b in zip(res["torch"][1:], res["dt"][1:]):
        _same(a, b)


def test_keyword_only_arguments_reach_setup_context(ns):
    res = {}
    for key, lib in LIBS.items():
        T = lib.Tensor

        @lib.library.custom_op(f"{ns}{key}::powk", mutates_args=())
        def powk(x: T, *, k: float = 2.0) -> T:
            return x ** k

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = keyword_only_inputs["k"]

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k * x ** (ctx.k - 1)

        powk.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = powk(x, k=3.0)
        y.sum().backward()
        g3 = x.grad.clone()
        x.grad = None
        powk(x).sum().backward()                     # the default reaches setup_context too
        res[key] = (y, g3, x.grad)
    for a, b in zip(res["torch"], res["dt"]):
        _same(a, b)


def test_impl_abstract_is_the_deprecated_register_fake(ns):
    for key, lib in LIBS.items():
        op = unary(lib, f"{ns}{key}::ia", lambda x: x * 2)
        with pytest.warns(FutureWarning, match="register_fake"):
            lib.library.impl_abstract(f"{ns}{key}::ia", lambda x: x.new_empty((4,)))
        assert tuple(op(lib.empty(2, device="meta")).shape) == (4,)
