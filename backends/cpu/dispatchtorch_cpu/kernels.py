"""Every prim of the catalogue in numpy: the reference the others are checked against.

float16 and bfloat16 are computed in float32 and rounded once, as PyTorch does.
"""
from __future__ import annotations

import numpy as np

from .blas_sums import MIN as _SUM_BLAS_MIN, blas_sum as _blas_sum
from .erf32 import erf as _erf32
from .parallel import THRESHOLD as _BIG
from .threaded import _LOWP, chunked as _chunked, reduce_large as _reduce_large
from .where_bits import where as _where_bits

_F32 = np.dtype(np.float32)


def _scipy_special(name):
    import scipy.special
    return getattr(scipy.special, name)


def _lazy(name):
    fn = []

    def call(*args, **kwargs):
        if not fn:
            fn.append(_scipy_special(name))
        return fn[0](*args, **kwargs)
    return call


def _odd(f):
    """An odd function keeps the sign of zero (scipy's erfinv(-0.0) is +0.0; PyTorch's -0.0)."""
    def call(x, out=None):
        return np.copysign(f(x), x, out=out)
    return call

def _erf(x, out=None):
    """scipy's erf, but float32 arrays of ERF32_MIN elements or more by erf32's blocked
    polynomials (scipy's float32 loop is scalar: 20 ns an element; under ERF32_MIN the
    forty ufunc calls of a block cost more than that)."""
    if x.dtype == _F32 and x.size >= ERF32_MIN and (out is None or out.dtype == _F32):
        if out is None:
            out = np.empty(x.shape, _F32)
        _erf32(out, x)
        return out
    return _scipy_erf(x, out=out)


_scipy_erf = _lazy("erf")
ERF32_MIN = 2048

# Each kernel tests its size: from _BIG elements on, it runs on chunks on the thread
# pool (threaded.py); below, it is the one numpy call it always was.

def _unary(f):
    def plain(out, x):
        if out.dtype in _LOWP:
            out[...] = f(x.astype(_F32))
        else:
            f(x, out=out)

    def kernel(out, x):
        if out.size >= _BIG:
            return _chunked(plain, out, (x,))
        if out.dtype in _LOWP:    # plain's body inline: one Python call less per small op
            out[...] = f(x.astype(_F32))
        else:
            f(x, out=out)
    return kernel


def _binary(f):
    if f is np.maximum or f is np.minimum:     # numpy deprecates their positional out
        ufunc = f

        def f(a, b, out=None):
            return ufunc(a, b, out=out)
    def plain(out, a, b):
        if a.dtype in _LOWP:
            out[...] = f(a.astype(_F32), b.astype(_F32))
        else:
            f(a, b, out)          # out positional: 0.1 µs less than out=out for a ufunc

    def kernel(out, a, b):
        if out.size >= _BIG:
            return _chunked(plain, out, (a, b))
        if a.dtype in _LOWP:      # plain's body inline: one Python call less per small op
            out[...] = f(a.astype(_F32), b.astype(_F32))
        else:
            f(a, b, out)
    return kernel


def _compare(f):
    def plain(out, a, b):
        if a.dtype in _LOWP:
            f(a.astype(_F32), b.astype(_F32), out=out)
        else:
            f(a, b, out=out)

    def kernel(out, a, b):
        if out.size >= _BIG:
            return _chunked(plain, out, (a, b))
        plain(out, a, b)
    return kernel


def _is_float(dt):
    return dt.kind in "fc" or dt in _LOWP      # ml_dtypes' bfloat16 has kind 'V'


def _div(out, a, b):
    if _is_float(a.dtype):
        return _binary(np.true_divide)(out, a, b)
    if np.any(b == 0):
        raise ZeroDivisionError("integer division by zero")
    rem = np.fmod(a, b)
    out[...] = (a - rem) // b          # exact: a - rem is a multiple of b


def _fmod(out, a, b):
    if not _is_float(a.dtype) and np.any(b == 0):
        raise ZeroDivisionError("integer modulo by zero")
    _binary(np.fmod)(out, a, b)


def _gcd(out, a, b):
    """PyTorch's Euclid on |a|, |b|: |INT_MIN| wraps to INT_MIN, so a gcd with it can be
    negative (numpy's np.gcd returns its absolute value instead)."""
    x, y = (np.array(np.abs(v)) for v in np.broadcast_arrays(a, b))      # 0-d: arrays too
    live = x != 0
    while live.any():
        xl = x[live]
        x[live] = np.fmod(y[live], xl)
        y[live] = xl
        live = x != 0
    out[...] = y


_ZEROS: dict = {}         # dtype -> read-only zeros(_ZEROS_LEN), sliced to the length needed
_ZEROS_LEN = 1 << 20
_RELU_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _zeros(dtype):
    z = _ZEROS.get(dtype)
    if z is None:
        z = _ZEROS[dtype] = np.zeros(_ZEROS_LEN, dtype)
        z.flags.writeable = False
    return z


def _relu_plain(out, x):
    """maximum(0, x), 0 first: numpy's maximum gives the second operand at a tie, so
    relu(-0.0) = -0.0. Contiguous float32/float64 take the zeros from an array of x's
    length, not a scalar: numpy's SIMD loop for two arrays, 3x faster than its loop
    with a broadcast scalar (64K float32: 10.2 against 32.6 us; 1M 184 against 438),
    the same bits."""
    if x.dtype in _LOWP:
        out[...] = np.maximum(0, x.astype(_F32))
    elif x.dtype in _RELU_FLOATS and out.dtype == x.dtype and x.flags.c_contiguous \
            and out.flags.c_contiguous:
        flat, dst, zeros = x.reshape(-1), out.reshape(-1), _zeros(x.dtype)
        n = flat.size
        for a in range(0, n, _ZEROS_LEN):
            b = min(n, a + _ZEROS_LEN)
            np.maximum(zeros[:b - a], flat[a:b], out=dst[a:b])
    else:
        np.maximum(0, x, out=out)


def _relu(out, x):
    """The relu composite in one pass (NaN stays NaN and -0.0 stays -0.0, as PyTorch's)."""
    if out.size >= _BIG:
        return _chunked(_relu_plain, out, (x,))
    _relu_plain(out, x)


def _where_plain(out, cond, a, b):
    if _where_bits(out, cond, a, b):
        return
    np.copyto(out, b)
    np.copyto(out, a, where=cond)


def _where(out, cond, a, b):
    if out.size >= _BIG:
        return _chunked(_where_plain, out, (cond, a, b))
    _where_plain(out, cond, a, b)


def _acc_dtype(x, out):
    return _F32 if out.dtype in _LOWP else out.dtype


def _reduce(ufunc):
    reduce = ufunc.reduce

    def plain(out, x, *, dims, keepdim):
        if x.dtype in _LOWP or out.dtype in _LOWP:
            out[...] = reduce(x.astype(_F32), axis=dims, dtype=_F32, keepdims=keepdim)
        else:
            # positional (axis, dtype, out, keepdims): keywords cost ufunc.reduce 1 µs; the
            # accumulation dtype defaults to out's
            reduce(x, dims, None, out, keepdim)

    def kernel(out, x, *, dims, keepdim):
        if x.size >= _BIG:
            return _reduce_large(plain, ufunc, True, out, x, dims, keepdim)
        plain(out, x, dims=dims, keepdim=keepdim)
    kernel.plain = plain
    return kernel


def _sum_plain(out, x, *, dims, keepdim):
    if x.size >= _SUM_BLAS_MIN and _blas_sum(out, x, dims):
        return
    _add_plain(out, x, dims=dims, keepdim=keepdim)


def _sum(out, x, *, dims, keepdim):
    """Trailing- and leading-axis float sums by BLAS (blas_sums.py) from MIN elements,
    on the pool's chunks from _BIG."""
    if x.size >= _SUM_BLAS_MIN:
        if x.size >= _BIG:
            return _reduce_large(_sum_plain, np.add, True, out, x, dims, keepdim)
        if _blas_sum(out, x, dims):
            return
    if x.dtype in _LOWP or out.dtype in _LOWP:      # _add_plain's body inline: a tiny sum
        out[...] = _add_reduce(x.astype(_F32), axis=dims, dtype=_F32, keepdims=keepdim)
    else:                                           # pays one Python call less
        _add_reduce(x, dims, None, out, keepdim)


_add_plain = _reduce(np.add).plain
_add_reduce = np.add.reduce


def _extreme(ufunc):
    reduce = ufunc.reduce

    def plain(out, x, *, dims, keepdim):
        if x.dtype in _LOWP:
            out[...] = reduce(x.astype(_F32), axis=dims, keepdims=keepdim)
        else:
            reduce(x, axis=dims, out=out, keepdims=keepdim)

    def kernel(out, x, *, dims, keepdim):
        if x.size >= _BIG:
            _reduce_large(plain, ufunc, False, out, x, dims, keepdim)
        else:
            plain(out, x, dims=dims, keepdim=keepdim)
        if x.dtype.kind == "f" and x.size:
            _first_zero(out, x, dims, keepdim)
    return kernel


def _first_zero(out, x, dims, keepdim):
    """A zero result takes the sign of the first zero of its slice: PyTorch's amax/amin
    keep the running value at a tie (std::max(acc, x)), so amax([0, -0.0]) is 0 and
    amax([-0.0, 0]) is -0.0; numpy's reduce gives the last one. (PyTorch's vectorised
    path over long rows combines lanes in its own order; this is its scalar rule.) A
    reduction over every dim keeps numpy's last: PyTorch's max() / min() of all elements
    (this kernel's commonest caller) give the last zero, its amax() the first."""
    nd = x.ndim
    if dims is None:
        return
    hit = out == 0
    if not hit.any():
        return
    axes = tuple(range(nd)) if dims is None else \
        tuple(sorted(d % nd for d in ((dims,) if isinstance(dims, int) else dims)))
    if len(axes) in (0, nd):
        return
    kept = [d for d in range(nd) if d not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1])
    first = np.take_along_axis(rows, np.argmax(rows == 0, axis=-1)[..., None], -1)[..., 0]
    if keepdim:
        first = np.expand_dims(first, axes)
    out[hit] = first.reshape(out.shape)[hit]


def _arg(f):
    def kernel(out, x, *, dim, keepdim):
        if x.dtype in _LOWP:
            x = x.astype(_F32)
        out[...] = f(x, axis=dim, keepdims=keepdim)
    return kernel


def _scan(f):
    def kernel(out, x, *, dim):
        if x.dtype in _LOWP:
            x = x.astype(_F32)
        out[...] = f(x, axis=dim, dtype=_acc_dtype(x, out))
    return kernel


def _cumsum(out, x, *, dim):
    """np.cumsum, then + 0.0: PyTorch's scan starts from +0.0 (0 + -0.0 = +0.0), numpy's
    from the first element, so a run of -0.0 stayed -0.0 (and a -0.0 g's cumsum
    backward gave -0.0 where PyTorch's gives 0). No other partial sum is a -0.0."""
    _scan(np.cumsum)(out, x, dim=dim)
    if out.dtype.kind in "fc":
        out += 0.0


def _cumext(ufunc):
    def kernel(values, indices, x, *, dim):
        if x.shape[dim] == 0:
            return
        xs = x.astype(_F32) if x.dtype in _LOWP else x
        run = ufunc.accumulate(xs, axis=dim)
        # the index is the last position up to here where x reached the running value
        hit = xs == run
        if xs.dtype.kind == "f":
            hit |= np.isnan(xs)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        pos = np.arange(x.shape[dim]).reshape(shape)
        indices[...] = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)
        values[...] = run
    return kernel


def _matmul(out, a, b):
    if a.dtype in _LOWP:
        out[...] = np.matmul(a.astype(_F32), b.astype(_F32))
    elif out.flags.c_contiguous:
        np.matmul(a, b, out=out)
    else:
        out[...] = np.matmul(a, b)


def _gather(out, x, index, *, dim):
    if index.size == 0:
        return
    if x.ndim == 1:
        x.take(index, out=out, mode="clip")     # validated: "raise" would buffer
    elif _rows_whole(x, index, dim):
        # index_select's and embedding's shape: the index repeats along the other dims
        # (stride 0), so it is one take of whole slices
        line = index[tuple(slice(None) if d == dim else 0 for d in range(index.ndim))]
        np.take(x, line, axis=dim, out=out, mode="clip")
    else:
        # not take_along_axis: index may be smaller than x in the other dims, as in PyTorch
        out[...] = x[_full_index(index, dim)]


def _rows_whole(x, index, dim):
    strides, shape = index.strides, index.shape
    return all((d == dim or (strides[d] == 0 and shape[d] == x.shape[d]))
               for d in range(index.ndim))


def _full_index(index, dim):
    idx = list(np.ix_(*[np.arange(n) for n in index.shape]))
    idx[dim] = index
    return tuple(idx)


_SCATTER_UFUNC = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _scatter_(out, index, src, *, dim, reduce):
    if index.size == 0:
        return
    if reduce == "none":
        out[_full_index(index, dim)] = src
        return
    ufunc = _SCATTER_UFUNC[reduce]
    acc = out.astype(_F32) if out.dtype in _LOWP else out
    if out.ndim >= 2 and _rows_whole(out, index, dim):
        line = index[tuple(slice(None) if d == dim else 0 for d in range(index.ndim))]
        part = src[tuple(slice(0, n) for n in index.shape)]
        _scatter_rows(ufunc, np.moveaxis(acc, dim, 0), line,
                      np.moveaxis(part.astype(_F32) if acc is not out else part, dim, 0))
    else:
        ufunc.at(acc, _full_index(index, dim), src.astype(_F32) if acc is not out else src)
    if acc is not out:
        out[...] = acc


def _scatter_rows(ufunc, out, line, src):
    """ufunc.at(out, line, src) for whole rows (embedding's and index_add's backward:
    the index repeats along the other dims), in ufunc.at's order: each target row
    first, then its source rows in their order (a stable sort), reduced down axis 0 one
    target at a time (a reduction down axis 0 is sequential: bit for bit ufunc.at's
    result; reduceat is not). 8x faster than ufunc.at's element loop on an embedding's
    (2048, 64) rows into 65; with many distinct targets and short rows ufunc.at stays."""
    keys = np.unique(line)
    if keys.size * 256 > line.size * (src.size // max(line.size, 1)):
        ufunc.at(out, line, src)
        return
    allkeys = np.concatenate([keys, line])
    order = np.argsort(allkeys, kind="stable")
    rows = np.concatenate([out[keys], src], axis=0)[order]
    ranked = allkeys[order]
    starts = np.flatnonzero(np.concatenate([[True], ranked[1:] != ranked[:-1]])).tolist()
    starts.append(ranked.size)
    reduce = ufunc.reduce
    for i, key in enumerate(keys.tolist()):
        reduce(rows[starts[i]:starts[i + 1]], axis=0, out=out[key])


def _nonzero(out, x):
    out[...] = np.argwhere(x)


def _sort(values, indices, x, *, dim, descending):
    xs = x.astype(_F32) if x.dtype in _LOWP else x
    if descending:
        # a stable ascending sort of the reversed data, reversed: values descend, NaN
        # first, and equal values keep their original order
        n = x.shape[dim]
        order = n - 1 - np.flip(np.argsort(np.flip(xs, axis=dim), axis=dim, kind="stable"), axis=dim)
    else:
        order = np.argsort(xs, axis=dim, kind="stable")
    indices[...] = order
    values[...] = np.take_along_axis(x, order, axis=dim)


def _searchsorted(out, seq, values, *, right):
    side = "right" if right else "left"
    if seq.dtype in _LOWP:
        seq, values = seq.astype(_F32), values.astype(_F32)
    for b in range(seq.shape[0]):
        out[b] = np.searchsorted(seq[b], values[b], side=side)


KERNELS = {
    # unary, floating
    "exp": _unary(np.exp), "exp2": _unary(np.exp2), "expm1": _unary(np.expm1),
    "log": _unary(np.log), "log2": _unary(np.log2), "log10": _unary(np.log10),
    "log1p": _unary(np.log1p), "sqrt": _unary(np.sqrt),
    "sin": _unary(np.sin), "cos": _unary(np.cos), "tan": _unary(np.tan),
    "asin": _unary(np.arcsin), "acos": _unary(np.arccos), "atan": _unary(np.arctan),
    "sinh": _unary(np.sinh), "cosh": _unary(np.cosh), "tanh": _unary(np.tanh),
    "asinh": _unary(np.arcsinh), "acosh": _unary(np.arccosh), "atanh": _unary(np.arctanh),
    "erf": _unary(_erf), "erfc": _unary(_lazy("erfc")), "erfinv": _unary(_odd(_lazy("erfinv"))),
    "floor": _unary(np.floor), "ceil": _unary(np.ceil), "round": _unary(np.rint),
    "trunc": _unary(np.trunc),
    # unary, other
    "neg": _unary(np.negative), "abs": _unary(np.abs), "bitwise_not": _unary(np.invert),
    # binary
    "add": _binary(np.add), "sub": _binary(np.subtract), "mul": _binary(np.multiply),
    "div": _div, "fmod": _fmod, "pow": _binary(np.power),
    "maximum": _binary(np.maximum), "minimum": _binary(np.minimum), "atan2": _binary(np.arctan2),
    "bitwise_and": _binary(np.bitwise_and), "bitwise_or": _binary(np.bitwise_or),
    "bitwise_xor": _binary(np.bitwise_xor), "bitwise_left_shift": _binary(np.left_shift),
    "bitwise_right_shift": _binary(np.right_shift), "gcd": _gcd,
    "eq": _compare(np.equal), "ne": _compare(np.not_equal), "lt": _compare(np.less),
    "le": _compare(np.less_equal), "gt": _compare(np.greater), "ge": _compare(np.greater_equal),
    "where": _where,
    # reductions and scans
    "sum": _sum, "prod": _reduce(np.multiply),
    "amax": _extreme(np.maximum), "amin": _extreme(np.minimum),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "cumsum": _cumsum, "cumprod": _scan(np.cumprod),
    "cummax": _cumext(np.maximum), "cummin": _cumext(np.minimum),
    # linear algebra, indexing, sorting
    "matmul": _matmul, "gather": _gather, "scatter_": _scatter_, "nonzero": _nonzero,
    "sort": _sort, "searchsorted": _searchsorted,
    # composites with a faster kernel of their own
    "relu": _relu,
}

from .linalg_kernels import KERNELS as _LINALG  # noqa: E402  (decompositions and solvers)

KERNELS.update(_LINALG)

from dispatchtorch.backend.prims import SPECIAL_BINARY, SPECIAL_UNARY  # noqa: E402

# special functions: scipy.special's ufuncs (nextafter: numpy's)
KERNELS.update({name: _unary(_lazy(f)) for name, (f, _) in SPECIAL_UNARY.items()})


def _lgamma(x, out=None):
    """scipy's gammaln, but +inf at -inf as C's lgamma and PyTorch's (scipy gives -inf)."""
    r = np.asarray(_scipy_special("gammaln")(x, out=out))
    r[x == -np.inf] = np.inf
    return r


KERNELS["lgamma"] = _unary(_lgamma)
KERNELS.update({name: _binary(np.nextafter if f == "nextafter" else _lazy(f))
                for name, (f, _) in SPECIAL_BINARY.items()})


def _airy_ai(x, out=None):
    """Ai(x): the first of scipy.special.airy's four results (Cephes, as PyTorch's)."""
    r = _scipy_special("airy")(x)[0]
    if out is None:
        return r
    out[...] = r
    return out


KERNELS["special_airy_ai"] = _unary(_airy_ai)

from .fft_kernels import KERNELS as _FFT_KERNELS  # noqa: E402  (the FFT prims, scipy.fft)

KERNELS.update(_FFT_KERNELS)
