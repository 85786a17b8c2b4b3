"""torch.library.opcheck: the op's registrations checked against its own behaviour on the
sample arguments: the schema's mutation claims, the fake kernel's shapes and dtypes against
the real outputs, and the autograd formula against finite differences."""
from __future__ import annotations

from .. import ops as _ops
from .._dtype import float64
from .._tensor import Tensor
from ..autograd.checks import gradcheck
from ..autograd.grad_mode import no_grad
from . import _binding
from .custom_ops import resolve

DEFAULT_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")


class OpCheckError(Exception):
    """An opcheck test failed (PyTorch's optests.OpCheckError)."""


def _map(values, fn):
    return [fn(v) if isinstance(v, Tensor) else
            [fn(e) if isinstance(e, Tensor) else e for e in v] if isinstance(v, (list, tuple))
            else v for v in values]


def _clone(t):
    return t.detach().clone().requires_grad_(t.requires_grad)


def _outputs(result):
    return [result] if isinstance(result, Tensor) else [
        r for r in (result if isinstance(result, (list, tuple)) else ()) if isinstance(r, Tensor)]


def _test_schema(opdef, pos, kw):
    before = _map(pos, lambda t: t.detach().clone())
    args = _map(pos, _clone)
    with no_grad():
        opdef(*args, **kw)
    for a, old, new in zip(opdef._parsed.args, before, args):
        for o, n in zip(_binding.tensors_of([old]), _binding.tensors_of([new])):
            if not a.mutated and not bool(_ops.equal(o, n.detach()) if o.device.type != "meta"
                                          else True):
                raise OpCheckError(f"{opdef._qualname}: argument '{a.name}' is mutated but the "
                                   f"schema {opdef._decl} does not say so (mutates_args)")


def _test_faketensor(opdef, pos, kw):
    if not _binding.tensors_of(pos):
        return
    real = opdef(*_map(pos, _clone), **kw)
    with no_grad():
        fake = opdef(*_map(pos, lambda t: t.detach().to("meta")), **kw)
    r, f = _outputs(real), _outputs(fake)
    if len(r) != len(f):
        raise OpCheckError(f"{opdef._qualname}: the fake kernel returned {len(f)} tensors, the "
                           f"real kernel {len(r)}")
    for i, (a, b) in enumerate(zip(r, f)):
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            raise OpCheckError(f"{opdef._qualname}: output {i} of the fake kernel is "
                               f"{b.dtype} {list(b.shape)}, of the real kernel {a.dtype} "
                               f"{list(a.shape)}")


def _test_autograd(opdef, pos, kw):
    wanted = [t for t in _binding.tensors_of(pos) if t.requires_grad]
    if not wanted:
        return
    if opdef._backward_fn is None:
        raise OpCheckError(f"{opdef._qualname}: an input requires grad but no autograd formula is "
                           "registered (register_autograd); backward through the op would raise")
    flat_in = _map(pos, lambda t: t.detach().to(dtype=float64 if t.dtype.is_floating_point
                                                else t.dtype).requires_grad_(t.requires_grad))
    inputs = tuple(t for t in _binding.tensors_of(flat_in) if t.requires_grad)

    def fn(*ts):
        it = iter(ts)
        args = _map(flat_in, lambda t: next(it) if t.requires_grad else t)
        return tuple(_outputs(opdef(*args, **kw)))

    try:
        gradcheck(fn, inputs)
    except Exception as e:
        raise OpCheckError(f"{opdef._qualname}: the registered backward disagrees with finite "
                           f"differences (float64 inputs): {e}") from e


TESTS = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd,
         "test_faketensor": _test_faketensor}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_UTILS, raise_exception=True,
            atol=None, rtol=None):
    """{test name: "SUCCESS"} for each test in `test_utils`; the first failure raises
    OpCheckError unless raise_exception=False (then its entry holds the exception)."""
    opdef = resolve(op, "opcheck")
    utils = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    for u in utils:
        if u not in TESTS:
            raise ValueError(f"test_utils={test_utils!r}: {u!r} is not one of {sorted(TESTS)} "
                             "(test_aot_dispatch_dynamic is not provided: docs/custom-ops.md)")
    pos, kw = _binding.bind(opdef._qualname, opdef._decl, opdef._parsed, args, kwargs or {})
    results = {}
    for u in utils:
        try:
            TESTS[u](opdef, pos, kw)
            results[u] = "SUCCESS"
        except OpCheckError as e:
            if raise_exception:
                raise
            results[u] = e
    return results
