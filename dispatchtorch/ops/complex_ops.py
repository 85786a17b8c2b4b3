"""Complex dtypes' own ops and what complex64/complex128 add to the existing ones.

- views that change the dtype: `view_as_real`, `view_as_complex`, `.real`, `.imag`
  (they alias memory through the backend's optional `reinterpret`);
- `complex`, `polar`, `conj` (materialised; `is_conj()` reports what PyTorch's lazy
  conjugate bit would), `conj_physical`, `resolve_conj`, `angle`, `abs` and `sgn`;
- the complex entries of the elementwise promotion tables (the ops PyTorch runs on
  complex), and the conjugate Wirtinger convention for their derivative rules.

Autograd follows PyTorch's convention: the gradient of a real loss L with respect to
z = x + iy is dL/dx + i dL/dy. A holomorphic op whose real rule is `g * f'(z)` then has
the rule `g * conj(f'(z))` = conj(rule(conj(g))), which is how `_wirtinger` reuses
every real rule written in public ops (mul, div, exp, matmul, ...) unchanged.
"""
from __future__ import annotations

import builtins
import cmath

from .. import _dtype as D
from .._run import apply, kernel_for, launch, record, storage_of, strides_of, wrap
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch import OPS
from ..dispatch.registry import frontend_row
from . import _elementwise as E
from ._composite import inplace_variant
from ._composite import composite
from ._args import write_out
from .retyped import _CONJ, is_conj, retyped_view
from . import creation, linalg, memory, pointwise, views



# -- the complex entries of the elementwise tables ---------------------------------------------

# ops PyTorch computes on complex inputs (the others raise NotImplementedError naming the
# dtype, from the executors' table lookup)
COMPLEX_ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "pow", "neg", "eq", "ne", "where",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "sigmoid", "square", "lerp", "sinc", "logaddexp"})


def _add_complex_entries():
    for spec in E._SPECS:
        if spec.name in COMPLEX_ELEMENTWISE and (spec.name != "div" or
                                                 spec.promote == "int_to_float"):
            spec.table[D.complex64] = D.complex64
            spec.table[D.complex128] = D.complex128


_add_complex_entries()
D.on_default_dtype_change.append(_add_complex_entries)     # after the tables' rebuild


# -- the conjugate Wirtinger convention for holomorphic rules -----------------------------------

def _conj_grad(x):
    return conj_physical(x) if isinstance(x, Tensor) and x._dtype.is_complex else x


def _wirtinger(rule):
    """conj(rule(conj(g))): a real rule `g * f'(z)` becomes PyTorch's `g * conj(f'(z))`.
    Real gradients take the real rule unchanged (one attribute test per node)."""
    def complex_rule(g, *saved):
        first = g[0] if isinstance(g, tuple) else g
        if first is None or not first._dtype.is_complex:
            return rule(g, *saved)
        g = tuple(_conj_grad(x) for x in g) if isinstance(g, tuple) else _conj_grad(g)
        r = rule(g, *saved)
        return tuple(_conj_grad(x) for x in r) if isinstance(r, tuple) else _conj_grad(r)
    complex_rule.__wrapped__ = rule
    return complex_rule


# rules that multiply the gradient by a function of the inputs (holomorphic in them);
# real-linear rules (views, add, sum, cat, ...) need no conjugation
HOLOMORPHIC_RULES = ("mul", "div", "exp", "exp2", "expm1", "log", "log2", "log10",
                     "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin", "acos",
                     "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
                     "square", "lerp", "sinc", "prod", "cumprod", "linear", "conv2d",
                     "conv_transpose2d", "matmul", "mm", "bmm", "mv", "dot", "addmm", "baddbmm",
                     "addmv", "outer", "einsum", "tensordot", "logaddexp")


def _pow_grad_complex(g, a, b, result, needs):
    """pow_backward_self / pow_backward_exponent for complex operands (derivatives.yaml):
    the real rule's tests `b >= 0` and `a > 0` read the real parts here."""
    ga = gb = None
    if needs[0]:
        if isinstance(b, Tensor):
            ga = pointwise.where(b == 0, 0.0, g * conj_physical(b * pointwise.pow(a, b - 1)))
        else:
            ga = creation.zeros_like(g) if b == 0 else g * _conj_grad(b * pointwise.pow(a, b - 1))
    if needs[1]:
        if isinstance(a, Tensor):
            zero = (a == 0) & ((real(b) if isinstance(b, Tensor) else b.real) >= 0)
            gb = pointwise.where(zero, 0.0, g * _conj_grad(result * pointwise.log(a)))
        else:
            gb = g * _conj_grad(result * cmath.log(a)) if a != 0 else creation.zeros_like(g)
    return ga, gb


def _split_rule(real_rule, complex_rule):
    def rule(g, *saved):
        return (complex_rule if g._dtype.is_complex else real_rule)(g, *saved)
    rule.__wrapped__ = real_rule
    return rule


def _logaddexp_complex(a, b):
    """torch._refs.logaddexp's complex branch: the operand with the larger real part
    leads (max + log1p(exp(min - max))); equal infinite real parts, and NaNs (a NaN
    in either part of the smaller one gives nan + nanj), as PyTorch's CPU kernel."""
    ra, rb = real(a), real(b)
    first = ra >= rb
    hi, lo = pointwise.where(first, a, b), pointwise.where(first, b, a)
    both_inf = ~pointwise.isfinite(ra) & (ra == rb)
    inf_vals = pointwise.where(real(lo) < 0, lo,
                               pointwise.log(pointwise.exp(lo) + pointwise.exp(hi)))
    vals = pointwise.where(both_inf, inf_vals, hi + pointwise.log1p(pointwise.exp(lo - hi)))
    return pointwise.where(lo != lo, builtins.complex(float("nan"), float("nan")), vals)


def _split_decomp(real_decomp, complex_decomp):
    """A binary composite's decomposition with a complex form (its operands share a dtype)."""
    def decomp(a, b):
        return (complex_decomp if a._dtype.is_complex else real_decomp)(a, b)
    decomp.__wrapped__ = real_decomp
    return decomp


def _wrap_rules():
    for name in HOLOMORPHIC_RULES:
        op = OPS.get(name)
        if op is not None and op.grad is not None and not hasattr(op.grad, "__wrapped__"):
            op.grad = _wirtinger(op.grad)
    pow_op = OPS["pow"]
    if not hasattr(pow_op.grad, "__wrapped__"):
        pow_op.grad = _split_rule(pow_op.grad, _pow_grad_complex)
    lae = OPS["logaddexp"]
    if not hasattr(lae.decomp, "__wrapped__"):
        lae.decomp = _split_decomp(lae.decomp, _logaddexp_complex)


_wrap_rules()


# -- checks ---------------------------------------------------------------------------------------

def _tensor(x, name, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


# -- views that change the dtype ---------------------------------------------------------------

def _view_as_real_grad(g):
    return view_as_complex(g.contiguous())


def _view_as_complex_grad(g):
    return view_as_real(g)


VIEW_AS_REAL = frontend_row(
    "view_as_real", kind="view", grad=_view_as_real_grad,
    signature="view_as_real(x)",
    doc="a complex tensor's memory as real (..., 2): [real, imag] pairs (a view)")
VIEW_AS_COMPLEX = frontend_row(
    "view_as_complex", kind="view", grad=_view_as_complex_grad,
    signature="view_as_complex(x)",
    doc="a float tensor (..., 2) with last stride 1 as complex (a view)")


def view_as_real(input):
    _tensor(input, "view_as_real")
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj()")
    stride = tuple(2 * s for s in strides_of(input)) + (1,)
    v = retyped_view(input, input._dtype.to_real(), input._shape + (2,), stride,
                     2 * input._offset, "view_as_real")
    if STATE.enabled and input._rg:
        record(VIEW_AS_REAL, (input,), {}, (v,))
    return v


def view_as_complex(input):
    _tensor(input, "view_as_complex")
    dt = input._dtype
    if dt not in (D.float32, D.float64):
        if dt is D.float16:
            raise RuntimeError("view_as_complex: complex32 (ComplexHalf) is not supported")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {dt.pt_name}")
    shape, st = input._shape, strides_of(input)
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    v = retyped_view(input, dt.to_complex(), shape[:-1], tuple(s // 2 for s in st[:-1]),
                     input._offset // 2, "view_as_complex")
    if STATE.enabled and input._rg:
        record(VIEW_AS_COMPLEX, (input,), {}, (v,))
    return v


def real(input):
    """A view of the real parts (the tensor itself for real dtypes), as PyTorch."""
    _tensor(input, "real")
    if not input._dtype.is_complex:
        return input
    return views.select(view_as_real(resolve_conj(input)), -1, 0)


def imag(input):
    _tensor(input, "imag")
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if is_conj(input):       # PyTorch: a view of -imag; here a fresh tensor of those values
        return views.select(view_as_real(resolve_conj(input)), -1, 1)
    return views.select(view_as_real(input), -1, 1)


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


# -- conjugation --------------------------------------------------------------------------------



def _conj_decomp(x):
    """Any backend with complex storage: copy the parts, negate the imaginary one."""
    return complex(real(x).clone(), -imag(x))


def _conj_rule(g):
    return conj_physical(g)


CONJ = composite("conj_physical", _conj_decomp, kind="elementwise", grad=_conj_rule,
                 signature="conj_physical(z)",
                 doc="complex conjugate z.real - i z.imag (a backend may give a kernel)")


def conj_physical(input, *, out=None):
    """The conjugate, computed (the conj_physical prim; real tensors are copied as is)."""
    _tensor(input, "conj_physical")
    if not input._dtype.is_complex:
        r = input.clone() if out is None else input
    else:
        r = apply(CONJ, input._place, (input,), (input._h,), ((input._shape, input._dtype),))
    if out is not None:
        return write_out(out, r)
    return r


def conj(input):
    """PyTorch's lazy conjugate, materialised: complex inputs give a new tensor that
    reports is_conj() True; real inputs are returned as they are."""
    _tensor(input, "conj")
    if not input._dtype.is_complex:
        return input
    if is_conj(input):           # conj of a conjugate: PyTorch clears the bit
        return conj_physical(input)
    r = conj_physical(input)
    _CONJ[id(r)] = r
    return r


def resolve_conj(input):
    _tensor(input, "resolve_conj")
    if not is_conj(input):
        return input
    r = input.detach().clone() if not input._rg else memory.clone(input)
    return r


def resolve_neg(input):
    _tensor(input, "resolve_neg")
    return input


# -- construction -------------------------------------------------------------------------------

def _complex_grad(g):
    return real(g), imag(g)


COMPLEX = frontend_row("complex", kind="memory", args=("real", "imag"), grad=_complex_grad,
                       signature="complex(real, imag)",
                       doc="real + i imag, from two float tensors of one dtype")


def complex(real, imag, *, out=None):  # noqa: A001  (torch.complex)
    """torch.complex: both parts the same floating dtype (float32 or float64), broadcast."""
    _tensor(real, "complex", "real")
    if not isinstance(imag, Tensor):
        raise TypeError(f"complex(): argument 'imag' (position 2) must be Tensor, not "
                        f"{type(imag).__name__}")
    if real._dtype is not imag._dtype:
        raise RuntimeError(f"Expected object of scalar type {real._dtype.pt_name} but got scalar "
                           f"type {imag._dtype.pt_name} for second argument")
    if real._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real._dtype.pt_name} and {imag._dtype.pt_name}")
    from .._run import same_place
    from .._shape import broadcast_shapes2
    same_place("complex", (real, imag))
    shape = broadcast_shapes2(real._shape, imag._shape, "complex")
    r = creation.empty(shape, dtype=real._dtype.to_complex(), device=real.device)
    parts = view_as_real(r)
    with _no_grad():
        parts.select(-1, 0).copy_(real)
        parts.select(-1, 1).copy_(imag)
    if STATE.enabled and (real._rg or imag._rg):
        record(COMPLEX, (real, imag), {}, (r,))
    if out is not None and out._dtype is not r._dtype:
        raise RuntimeError(f"Expected object of scalar type {r._dtype.pt_name} but got scalar "
                           f"type {out._dtype.pt_name} for argument 'out'")
    if out is not None:
        return write_out(out, r)
    return r


class _no_grad:
    def __enter__(self):
        self.prev = STATE.enabled
        STATE.enabled = False

    def __exit__(self, *exc):
        STATE.enabled = self.prev


def polar(abs, angle, *, out=None):  # noqa: A002  (PyTorch's argument names)
    """abs * (cos(angle) + i sin(angle)), differentiable in both."""
    _tensor(abs, "polar", "abs")
    r = complex(abs * pointwise.cos(angle), abs * pointwise.sin(angle))
    if out is not None:
        return write_out(out, r)
    return r


# -- complex -> real ops --------------------------------------------------------------------------

def _abs_grad(g, x, result):
    return g * sgn(x)


# the abs prim writes |z| into an output of the real dtype; this row carries its rule
COMPLEX_ABS = frontend_row("complex_abs", kind="memory", grad=_abs_grad,
                           signature="abs(z) for complex z",
                           doc="|z| in the real dtype, by the abs prim")


def complex_abs(x):
    place = x._place
    rt = x._dtype.to_real()
    out = place.empty(x._shape, rt.name, place.index)
    launch(OPS["abs"], kernel_for(OPS["abs"], place), place, (out, x._h), None, (x._dtype,))
    r = wrap(out, x._shape, rt, place)
    if STATE.enabled and x._rg:
        record(COMPLEX_ABS, (x,), {}, (r,))
    return r


def complex_angle(x):
    """atan2(imag, real); its gradient (through the views) is g * i z / |z|^2."""
    return pointwise.atan2(imag(x), real(x))


def sgn(input, *, out=None):
    """z / |z| (0 at 0) for complex inputs; sign(x) for real ones."""
    _tensor(input, "sgn")
    if not input._dtype.is_complex:
        r = pointwise.sign(input)
    else:
        a = complex_abs(input)
        r = pointwise.where(a == 0, 0.0, input / pointwise.where(a == 0, 1.0, a))
    if out is not None:
        return write_out(out, r)
    return r


E.COMPLEX_TO_REAL.update({"abs": complex_abs, "angle": complex_angle})


def vdot(input, other, *, out=None):
    """conj(input) . other (the conjugate of the first argument, as PyTorch)."""
    r = linalg.dot(conj_physical(input) if input._dtype.is_complex else input, other)
    if out is not None:
        return write_out(out, r)
    return r


def isreal(input):
    """True where the imaginary part is 0 (everywhere for real dtypes)."""
    _tensor(input, "isreal")
    if not input._dtype.is_complex:
        return creation.ones_like(input, dtype=D.bool_)
    return imag(input) == 0


def _adjoint(self):
    """mH / adjoint: the conjugate transpose (a conjugate-marked result, as PyTorch's)."""
    return conj(self.mT)


def _h(self):
    if self.dim() > 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return conj(self.t() if self.dim() == 2 else self)


def _is_complex_tensor(self):
    return self._dtype.is_complex


def _type_as(self, other):
    """Tensor.type_as (LLaMA's rotary embedding casts back with it): self.to(other.dtype)."""
    return self.to(other.dtype)


PUBLIC = {"view_as_real": view_as_real, "view_as_complex": view_as_complex, "real": real,
          "imag": imag, "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj,
          "resolve_neg": resolve_neg, "is_conj": is_conj, "complex": complex, "polar": polar,
          "sgn": sgn, "vdot": vdot, "isreal": isreal, "adjoint": _adjoint}
METHODS = {"vdot": vdot, "isreal": isreal, "adjoint": _adjoint, "mH": property(_adjoint),
           "H": property(_h), "view_as_real": view_as_real, "conj": conj,
           "conj_physical": conj_physical,
           "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "is_conj": is_conj,
           "sgn": sgn, "sgn_": inplace_variant(sgn, "sgn_"),
           "real": property(real, _set_real, doc="the real parts (a view)"),
           "imag": property(imag, _set_imag, doc="the imaginary parts (a view)"),
           "is_complex": _is_complex_tensor, "type_as": _type_as,
           "cfloat": lambda self, memory_format=None: self.to(D.complex64),
           "cdouble": lambda self, memory_format=None: self.to(D.complex128)}
