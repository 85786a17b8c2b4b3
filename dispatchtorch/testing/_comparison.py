"""torch.testing.assert_close: compares (nested sequences / mappings of) tensors,
numbers, booleans and None with PyTorch's default tolerances per dtype and its
AssertionError messages, so a test written against PyTorch passes and fails the same
way here. Values are compared with this library's own ops (isclose, abs, max)."""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

from .. import ops as _ops
from .._dtype import (bfloat16, complex64, complex128, float16, float32, float64, int64,
                      promote_types)
from .._layout import sparse_csr, strided
from .._tensor import Tensor

# {dtype: (rtol, atol)}: PyTorch's; any other dtype compares exactly
_PRECISIONS = {float16: (0.001, 1e-5), bfloat16: (0.016, 1e-5), float32: (1.3e-6, 1e-5),
               float64: (1e-7, 1e-7), complex64: (1.3e-6, 1e-5), complex128: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: int64, float: float64, complex: complex128}


class _Mismatch(Exception):
    """A failure found while comparing: the exception class to raise, its message and the
    item's path in the nested inputs."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            text = self.msg
            if self.id:
                text += f"\n\nThe failure occurred for item {''.join(str([i]) for i in self.id)}"
            msg = msg(text) if callable(msg) else text
        return self.type(msg)


class _Unsupported(Exception):
    """This pair kind does not handle the inputs: try the next one."""


def default_tolerances(*dtypes, precisions=None):
    """The loosest (rtol, atol) of the dtypes."""
    precisions = precisions or _PRECISIONS
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                        f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _mismatch_msg(default_identifier, identifier, extra, abs_diff, abs_idx, atol,
                  rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff(kind, value, idx, tol):
        line = (f"{kind.title()} difference: {value}" if idx is None
                else f"Greatest {kind} difference: {value} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff("absolute", abs_diff, abs_idx, atol) + diff("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", identifier, f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _unravel(flat, shape):
    idx = []
    for size in shape[::-1]:
        flat, mod = divmod(flat, size)
        idx.append(mod)
    return tuple(idx[::-1])


def _tensor_msg(actual, expected, matches, rtol, atol, identifier=None):
    n = matches.numel()
    bad = n - int(_ops.sum(matches))
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.dtype.is_floating_point and not a.dtype.is_complex:
        a, e = a.to(int64), e.to(int64)
    abs_diff = _ops.abs(a - e)
    abs_diff[m] = 0
    max_abs, abs_at = _ops.max(abs_diff, 0)
    rel_diff = abs_diff / _ops.abs(e)
    rel_diff[m] = 0
    max_rel, rel_at = _ops.max(rel_diff, 0)
    shape = tuple(matches.shape)
    return _mismatch_msg("Tensor-likes", identifier, extra, max_abs.item(),
                         _unravel(int(abs_at), shape), atol, max_rel.item(),
                         _unravel(int(rel_at), shape), rtol)


class _Pair:
    def __init__(self, actual, expected, id):
        self.actual, self.expected, self.id = actual, expected, id

    def fail(self, msg, type=AssertionError):
        raise _Mismatch(type, msg, self.id)


class _NonePair(_Pair):
    def __init__(self, actual, expected, id, **_):
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self.fail(f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual, expected, id, **_):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id)

    def compare(self):
        if self.actual is not self.expected:
            self.fail(f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual, expected, id, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **_):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)],
                                           rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self.fail(f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        self.fail(_scalar_msg(a, e, self.rtol, self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual, expected, id, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **_):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = (self._to_tensor(x) for x in (actual, expected))
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)
        self.equal_nan, self.check_device, self.check_dtype = equal_nan, check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x):
        if isinstance(x, Tensor):
            return x
        try:
            return _ops.as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def compare(self):
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        if "meta" in (a.device.type, e.device.type):
            return
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            d = promote_types(a.dtype, e.dtype)
            a, e = a.to(d), e.to(d)
        if a.layout != e.layout:
            a, e = (x.to_dense() if x.layout != strided else x for x in (a, e))
        if a.is_sparse:
            self._compare_coo(a, e)
        elif a.layout == sparse_csr:
            self._compare_csr(a, e)
        else:
            self._close(a, e, self.rtol, self.atol, self.equal_nan)

    def _compare_attributes(self, a, e):
        def mismatch(name, x, y):
            self.fail(f"The values for attribute '{name}' do not match: {x} != {y}.")
        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if self.check_layout:
                mismatch("layout", a.layout, e.layout)
        elif a.layout == strided and self.check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)

    def _compare_coo(self, a, e):
        if a.sparse_dim() != e.sparse_dim():
            self.fail("The number of sparse dimensions in sparse COO tensors does not match: "
                      f"{a.sparse_dim()} != {e.sparse_dim()}")
        if a._nnz() != e._nnz():
            self.fail("The number of specified values in sparse COO tensors does not match: "
                      f"{a._nnz()} != {e._nnz()}")
        self._close(a._indices(), e._indices(), 0, 0, False, "Sparse COO indices")
        self._close(a._values(), e._values(), self.rtol, self.atol, self.equal_nan,
                    "Sparse COO values")

    def _compare_csr(self, a, e):
        if a._nnz() != e._nnz():
            self.fail("The number of specified values in sparse CSR tensors does not match: "
                      f"{a._nnz()} != {e._nnz()}")
        crow, col = (a.crow_indices(), e.crow_indices()), (a.col_indices(), e.col_indices())
        d = promote_types(crow[0].dtype, crow[1].dtype)
        self._close(crow[0].to(d), crow[1].to(d), 0, 0, False, "Sparse CSR crow_indices")
        self._close(col[0].to(d), col[1].to(d), 0, 0, False, "Sparse CSR col_indices")
        self._close(a.values(), e.values(), self.rtol, self.atol, self.equal_nan,
                    "Sparse CSR values")

    def _close(self, a, e, rtol, atol, equal_nan, identifier=None):
        matches = _ops.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(_ops.all(matches)):
            return
        if not a.shape:
            self.fail(_scalar_msg(a.item(), e.item(), rtol, atol, identifier))
        self.fail(_tensor_msg(a, e, matches, rtol, atol, identifier))


_PAIRS = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _pairs(actual, expected, id, options):
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, "The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", id)
        return [p for i in range(len(actual))
                for p in _pairs(actual[i], expected[i], (*id, i), options)]
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(ke - ka)}\n"
                            f"Additional keys in the actual mapping: {sorted(ka - ke)}", id)
        keys = ka
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*id, k), options)]
    for kind in _PAIRS:
        try:
            return [kind(actual, expected, id, **options)]
        except _Unsupported:
            continue
        except _Mismatch:
            raise
        except Exception as error:      # (a bool against an int: PyTorch's RuntimeError too)
            raise RuntimeError(
                f"Originating a {kind.__name__.lstrip('_')}() at item "
                f"{''.join(str([i]) for i in id)} with\n\n{type(actual).__name__}(): {actual}"
                f"\n\nand\n\n{type(expected).__name__}(): {expected}\n\nresulted in the "
                "unexpected exception above.") from error
    raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise (AssertionError for a mismatch) unless actual and expected are close."""
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Mismatch as m:
        raise m.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Mismatch as m:
            raise m.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The pre-1.12 form (deprecated there too): looser defaults, dtypes need not match."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
                  "in a future release. Please use `torch.testing.assert_close()` instead. You can "
                  "find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _ops.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _ops.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype, precisions={
            float16: (1e-3, 1e-3), float32: (1e-4, 1e-5), float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
