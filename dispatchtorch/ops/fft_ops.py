"""torch.fft: the three FFT prims (fft_c2c, fft_r2c, fft_c2r) and every public transform
built on them as PyTorch's aten/src/ATen/native/SpectralOps.cpp builds them: argument
canonicalisation (n / s, dim, norm), zero-padding or trimming, and the derivative rules
of derivatives.yaml (fft_r2c_backward, fft_c2r_backward; c2c's adjoint is c2c the
other way), written in these public ops so double backward works."""
from __future__ import annotations

import operator

from .._layout import require_strided as _require_strided
from .. import _dtype as D
from .._run import apply
from .._shape import norm_dim
from .._tensor import Tensor
from ..dispatch.registry import prim_row
from . import creation, memory, shape_ops
from .complex_ops import conj, conj_physical, real
from ._args import write_out

# -- the prims' rows ----------------------------------------------------------------------


def _c2c_grad(g, dims, forward, norm):
    return _c2c(g, dims, norm, not forward)


def _r2c_grad(g, dims, norm, onesided, last_dim_size):
    """fft_r2c_backward: the onesided half is zero-padded to the full length, then the
    adjoint transform; the input was real, so its gradient is the real part."""
    if onesided:
        d = dims[-1]
        missing = last_dim_size - g.shape[d]
        if missing > 0:
            shape = list(g.shape)
            shape[d] = missing
            g = memory.cat([g, creation.zeros(shape, dtype=g.dtype, device=g.device)], d)
    return real(_c2c(g, dims, norm, False))


def _c2r_grad(g, dims, norm):
    """fft_c2r_backward: r2c of the gradient, with the entries whose mirror image lies
    outside the onesided half counted twice."""
    gi = _r2c(g, dims, norm, True)
    d = dims[-1]
    double = g.shape[d] - gi.shape[d]
    if double > 0:
        w = [1.0] + [2.0] * double + [1.0] * (gi.shape[d] - 1 - double)
        shape = [1] * gi.dim()
        shape[d] = gi.shape[d]
        gi = gi * creation.tensor(w, dtype=g.dtype, device=g.device).reshape(shape)
    return gi


FFT_C2C = prim_row("fft_c2c", kind="fft", grad=_c2c_grad)    # dtypes: the catalogue's
FFT_R2C = prim_row("fft_r2c", kind="fft", grad=_r2c_grad)
FFT_C2R = prim_row("fft_c2r", kind="fft", grad=_c2r_grad)


def _c2c(x, dims, norm, forward):
    kp = {"dims": tuple(dims), "forward": bool(forward), "norm": norm}
    return apply(FFT_C2C, x._place, (x,), (x._h,), ((x._shape, x._dtype),), kp)


def _r2c(x, dims, norm, onesided):
    ct = x._dtype.to_complex()
    x._place.check_dtype(ct, "fft_r2c")
    shape = list(x._shape)
    last = shape[dims[-1]]
    if onesided:
        shape[dims[-1]] = last // 2 + 1
    kp = {"dims": tuple(dims), "norm": norm, "onesided": bool(onesided)}
    return apply(FFT_R2C, x._place, (x,), (x._h,), ((tuple(shape), ct),), kp,
                 {**kp, "last_dim_size": last})


def _c2r(x, dims, norm, last_dim_size):
    shape = list(x._shape)
    shape[dims[-1]] = last_dim_size
    kp = {"dims": tuple(dims), "norm": norm}
    return apply(FFT_C2R, x._place, (x,), (x._h,), ((tuple(shape), x._dtype.to_real()),), kp)


# -- argument handling, as SpectralOps.cpp -------------------------------------------------

def _norm_mode(norm, forward):
    """norm_from_string: torch.fft's norm names as the prims' scale for one direction."""
    if norm is None or norm == "backward":
        return "none" if forward else "by_n"
    if norm == "forward":
        return "by_n" if forward else "none"
    if norm == "ortho":
        return "by_root_n"
    raise ValueError(f"Invalid normalization mode: \"{norm}\"")


def _promote(x, name, require_complex=False):
    """promote_tensor_fft: integers compute in the default float dtype; half precision
    has no CPU FFT in PyTorch."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    dt = x._dtype
    if dt.category < D.FLOAT:
        x = x.to(D.get_default_dtype())
        dt = x._dtype
    if dt in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dt.pt_name}")
    if require_complex and not dt.is_complex:
        ct = dt.to_complex()
        x._place.check_dtype(ct, name)
        x = x.to(ct)
    return x


def _resize(x, dims, sizes):
    """resize_fft_input: trim or zero-pad each of dims to its size."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            shape = list(x.shape)
            shape[d] = n - have
            x = memory.cat([x, creation.zeros(shape, dtype=x.dtype, device=x.device)], d)
    return x


def _dims_list(dim):
    if isinstance(dim, int):
        return [dim]
    return [operator.index(d) for d in dim]


def _shape_and_dims(x, s, dim, name):
    """canonicalize_fft_shape_and_dim_args: the signal sizes and the dims they apply to."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [norm_dim(d, ndim, name) for d in _dims_list(dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [operator.index(n) for n in s]
        if dims is None:
            if len(s) > ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{ndim} dimensions.")
            dims = list(range(ndim - len(s), ndim))
        elif len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        s = [x.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    else:
        if dims is None:
            dims = list(range(ndim))
        s = [x.shape[d] for d in dims]
    for n in s:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return s, dims


def _c2r_shape_and_dims(x, s, dim, name):
    """canonicalize_fft_c2r_shape_and_dim_args: also the output length of the last dim."""
    shape, dims = _shape_and_dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else shape[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _write(out, r):
    if out is None:
        return r
    return write_out(out, r)


def _one(n, dim):
    return (None if n is None else [n]), [dim]


# -- complex to complex ---------------------------------------------------------------------

def _fftn(x, s, dim, norm, forward, name):
    x = _promote(x, name, require_complex=True)
    shape, dims = _shape_and_dims(x, s, dim, name)
    x = _resize(x, dims, shape)
    if not dims:
        return x.clone()
    return _c2c(x, dims, _norm_mode(norm, forward), forward)


def _fft1(x, n, dim, norm, forward, name):
    """fft / ifft: a real input runs as a two-sided r2c (conjugated for ifft, so the
    result reports is_conj() as PyTorch's)."""
    x = _promote(x, name)
    if x._dtype.is_complex:
        return _fftn(x, *_one(n, dim), norm, forward, name)
    shape, dims = _shape_and_dims(x, *_one(n, dim), name)
    r = _r2c(_resize(x, dims, shape), dims, _norm_mode(norm, forward), False)
    return r if forward else conj(r)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _fft1(input, n, dim, norm, True, "fft"))


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _fft1(input, n, dim, norm, False, "ifft"))


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _fftn(input, s, dim, norm, True, "fft2"))


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _fftn(input, s, dim, norm, False, "ifft2"))


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _fftn(input, s, dim, norm, True, "fftn"))


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _fftn(input, s, dim, norm, False, "ifftn"))


# -- real to complex ------------------------------------------------------------------------

def _real_input(x, name):
    x = _promote(x, name)
    if x._dtype.is_complex:
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got "
                           f"{x._dtype.pt_name}")
    return x


def _rfftn(x, s, dim, norm, name):
    x = _real_input(x, name)
    shape, dims = _shape_and_dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    return _r2c(_resize(x, dims, shape), dims, _norm_mode(norm, True), True)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _rfftn(input, *_one(n, dim), norm, "rfft"))


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _rfftn(input, s, dim, norm, "rfft2"))


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _rfftn(input, s, dim, norm, "rfftn"))


def _ihfftn(x, s, dim, norm, name):
    x = _real_input(x, name)
    shape, dims = _shape_and_dims(x, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    mode = _norm_mode(norm, False)
    tmp = _r2c(_resize(x, dims, shape), dims[-1:], mode, True)
    if len(dims) == 1:
        return conj(tmp)            # PyTorch's result carries the conjugate bit
    return _c2c(conj_physical(tmp), dims[:-1], mode, False)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _ihfftn(input, *_one(n, dim), norm, "ihfft"))


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _ihfftn(input, s, dim, norm, "ihfft2"))


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _ihfftn(input, s, dim, norm, "ihfftn"))


# -- complex to real ------------------------------------------------------------------------

def _irfftn(x, s, dim, norm, name):
    x = _promote(x, name, require_complex=True)
    shape, dims, last = _c2r_shape_and_dims(x, s, dim, name)
    x = _resize(x, dims, shape)
    return _c2r(x, dims, _norm_mode(norm, False), last)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _irfftn(input, *_one(n, dim), norm, "irfft"))


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _irfftn(input, s, dim, norm, "irfft2"))


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _irfftn(input, s, dim, norm, "irfftn"))


def _hfftn(x, s, dim, norm, name):
    x = _promote(x, name, require_complex=True)
    shape, dims, last = _c2r_shape_and_dims(x, s, dim, name)
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _c2r(conj_physical(x), dims[-1:], mode, last)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _write(out, _hfftn(input, *_one(n, dim), norm, "hfft"))


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _write(out, _hfftn(input, s, dim, norm, "hfft2"))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _write(out, _hfftn(input, s, dim, norm, "hfftn"))


# -- helpers --------------------------------------------------------------------------------

def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, out=None):
    """[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n), as ATen computes it."""
    _require_strided(layout, "fftfreq")
    r = creation.arange(n, dtype=dtype, device=device) if dtype is not None else \
        creation.arange(n, dtype=D.get_default_dtype(), device=device)
    right = (n + 1) // 2
    if right < n:
        r[right:] = creation.arange(-(n // 2), 0, dtype=r.dtype, device=r.device)
    r = r * (1.0 / (n * d))
    return _write(out, r.requires_grad_(requires_grad) if requires_grad else r)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, out=None):
    _require_strided(layout, "rfftfreq")
    r = creation.arange(n // 2 + 1, dtype=dtype or D.get_default_dtype(), device=device)
    r = r * (1.0 / (n * d))
    return _write(out, r.requires_grad_(requires_grad) if requires_grad else r)


def _shift(x, dim, inverse):
    dims = list(range(x.dim())) if dim is None else [norm_dim(d, x.dim(), "fftshift")
                                                     for d in _dims_list(dim)]
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return shape_ops.roll(x, shifts, dims) if dims else x.clone()


def fftshift(input, dim=None):
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    return _shift(input, dim, True)


PUBLIC = {name: globals()[name] for name in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift")}
