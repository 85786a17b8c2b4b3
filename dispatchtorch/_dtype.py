"""dtypes and PyTorch's type promotion, with every table built once at import."""
from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from .backend.dtypes import ALL_DTYPE_NAMES, DTYPE_NAMES, FLOAT8, ITEMSIZE, UNSIGNED

# category order used by promotion: bool < integer < floating < complex
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3

_PT_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
             "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
             "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
             "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
             "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
             "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
             "float8_e8m0fnu": "Float8_e8m0fnu"}
# the C++ type names some PyTorch messages use ("float != double")
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
              "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
              **{n: f"c10::{_PT_NAMES[n]}" for n in FLOAT8}}
_UNSIGNED_NAMES = frozenset({"bool", "uint8", "float8_e8m0fnu"}) | frozenset(UNSIGNED)


class dtype:
    """A tensor element type; compare with `is` or `==`."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed", "category", "np",
                 "_promote", "_rank", "is_complex", "is_grad", "bare", "__weakref__")

    def __init__(self, name, rank):
        self.name = name
        self._rank = rank
        self.itemsize = ITEMSIZE[name]
        self.is_floating_point = name.startswith(("float", "bfloat"))
        self.is_complex = name.startswith("complex")
        self.category = (BOOL if name == "bool" else FLOAT if self.is_floating_point
                         else COMPLEX if self.is_complex else INT)
        self.is_grad = self.is_floating_point or self.is_complex    # may require grad
        self.is_signed = name not in _UNSIGNED_NAMES
        self.np = np.dtype(getattr(ml_dtypes, name) if name == "bfloat16" or name in FLOAT8
                           else name)
        # a bare dtype (uint16-64, float8): PyTorch stores it but computes in few ops
        self.bare = name in UNSIGNED or name in FLOAT8
        self._promote = _Promotions(self)

    def __repr__(self):
        return f"dispatchtorch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """complex64 -> float32, complex128 -> float64; real dtypes are their own."""
        return BY_NAME[_REAL_OF[self.name]] if self.is_complex else self

    def to_complex(self):
        """float32 -> complex64, float64 -> complex128 (PyTorch's toComplexType)."""
        if self.is_complex:
            return self
        if self.name not in _COMPLEX_OF:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.pt_name}" if self.name !=
                               "float16" else "complex32 (ComplexHalf) is not supported")
        return BY_NAME[_COMPLEX_OF[self.name]]

    @property
    def pt_name(self):
        """PyTorch's C++ scalar type name, used in error messages as PyTorch does."""
        return _PT_NAMES[self.name]

    @property
    def cpp_name(self):
        """The C++ element type name, as in PyTorch's `float != double` messages."""
        return _CPP_NAMES[self.name]


class _Promotions(dict):
    """a._promote: b -> promote_types(a, b). The pairs PyTorch refuses (float8 with any
    other dtype, uint16-64 with anything but floats) are missing, so the common pairs
    cost one plain dict lookup and a refused one raises PyTorch's error."""

    __slots__ = ("of",)

    def __init__(self, of):
        super().__init__()
        self.of = of

    def __missing__(self, other):
        a, b = self.of, other
        kind = "Float8 Types" if a.name in FLOAT8 or b.name in FLOAT8 else \
            "uint16, uint32, uint64 types"
        raise RuntimeError(f"Promotion for {kind} is not supported, attempted to promote "
                           f"{a.pt_name} and {b.pt_name}")


_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
DTYPES = tuple(dtype(n, i) for i, n in enumerate(ALL_DTYPE_NAMES))
BY_NAME = {d.name: d for d in DTYPES}
(bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
 complex64, complex128, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
 float8_e5m2fnuz, float8_e8m0fnu) = DTYPES
BARE_DTYPES = tuple(d for d in DTYPES if d.bare)


def _by_name(name):
    return BY_NAME[name]


def _promote_pair(a: dtype, b: dtype) -> dtype | None:
    """torch.promote_types, derived from PyTorch's rules instead of a pasted table;
    None where PyTorch refuses the pair."""
    if a is b:
        return a
    if a.bare or b.bare:    # float8: itself only; uint16-64: itself or a (non-float8) float
        other = b if a.bare else a
        if a.name in FLOAT8 or b.name in FLOAT8 or other.category != FLOAT:
            return None
        return other
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT:     # complex64 + float64
            return _promote_pair(hi.to_real(), lo).to_complex()
        return hi
    if a.category == COMPLEX:
        return a if a.itemsize > b.itemsize else b
    if a.category == FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize > b.itemsize else b
    # integers: uint8 with a signed type needs the next signed size up
    if a is uint8 or b is uint8:
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a.itemsize > b.itemsize else b


for _a in DTYPES:
    for _b in DTYPES:
        _p = _promote_pair(_a, _b)
        if _p is not None:
            _a._promote[_b] = _p


def promote_types(a: dtype, b: dtype) -> dtype:
    return a._promote[b]


_default_float = float32
on_default_dtype_change: list = []    # callbacks: tables that depend on the default dtype


def can_cast(src: dtype, dst: dtype) -> bool:
    """PyTorch's canCast: no float -> integer, no complex -> real, no non-bool -> bool."""
    if src.category >= FLOAT and dst.category < src.category:
        return False
    if src is not bool_ and dst is bool_:
        return False
    return True


def get_default_dtype() -> dtype:
    return _default_float


def default_complex_dtype() -> dtype:
    """complex128 when the default dtype is float64, else complex64 (PyTorch's rule)."""
    return complex128 if _default_float is float64 else complex64


def set_default_dtype(d) -> None:
    global _default_float
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {d}")
    _default_float = d
    for callback in on_default_dtype_change:
        callback()


_NP_TO_DTYPE = {d.np: d for d in DTYPES}
_PY_TYPES = {builtins.bool: bool_, builtins.int: int64}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
            "int": "int32", "short": "int16", "bool_": "bool", "cfloat": "complex64",
            "cdouble": "complex128"}


def to_dtype(d) -> dtype:
    """Accept a dtype, a name, a numpy dtype or a Python type; raise TypeError otherwise."""
    if type(d) is dtype:
        return d
    if d is builtins.float:
        return _default_float
    if d is builtins.complex:
        return default_complex_dtype()
    if d in _PY_TYPES:
        return _PY_TYPES[d]
    if isinstance(d, str):
        name = _ALIASES.get(d, d).removeprefix("torch.").removeprefix("dispatchtorch.")
        if name in BY_NAME:
            return BY_NAME[name]
        raise TypeError(f"unknown dtype {d!r}; expected one of {', '.join(DTYPE_NAMES)}")
    try:
        return _NP_TO_DTYPE[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unknown dtype {d!r}; expected one of {', '.join(DTYPE_NAMES)}") from None


def from_numpy_dtype(npd) -> dtype:
    try:
        return _NP_TO_DTYPE[npd]
    except KeyError:
        raise TypeError(f"can't convert numpy array of type {npd}; the supported types are "
                        f"{', '.join(DTYPE_NAMES)}") from None


def scalar_dtype(value) -> dtype:
    """The weak dtype of a Python scalar, as PyTorch types a wrapped number."""
    t = type(value)
    if t is builtins.bool:
        return bool_
    if t is builtins.int:
        return int64
    if t is builtins.float:
        return _default_float
    if t is builtins.complex:
        return default_complex_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"expected a Python number, got {t.__name__}")


def result_type_of(dim_dt, zero_dt, scalar_dt) -> dtype:
    """PyTorch's ResultTypeState combination: tensors with dims beat 0-d tensors,
    which beat Python scalars, unless the weaker participant is of a higher category."""
    return _combine(dim_dt, _combine(zero_dt, scalar_dt))


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:       # a weaker complex keeps a float's precision
        return higher.to_complex() if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher is bool_ or lower.category == FLOAT:
        return higher._promote[lower]
    return higher


# machine limits live in their own module; `iinfo` here also takes bool (int_limits),
# the public torch.iinfo (dispatchtorch/__init__.py) is _finfo.iinfo
from ._finfo import finfo  # noqa: E402,F401
from ._finfo import int_limits as iinfo  # noqa: E402,F401
