"""Sample cases for every prim and dtype, run through any Backend object and its
kernel table, so one harness checks the cuda kernels (under numpy here, under cupy
on a GPU) against the numpy reference backend.

A case holds host arrays only: each operand is a C-contiguous storage plus the view
geometry (shape, element strides, offset) a kernel receives, so every backend sees
the same non-contiguous, broadcast or offset views. Outputs start poisoned (NaN or
an unlikely integer), which proves every element was written; outputs that are
views of a larger storage prove nothing outside the view was touched.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from dispatchtorch.backend import PRIMS

ALL = ("bool", "uint8", "int8", "int16", "int32", "int64",
       "float16", "bfloat16", "float32", "float64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
KIND_DTYPES = {"float": FLOATS, "numeric": INTS + FLOATS, "integral": ("bool",) + INTS,
               "integer": INTS, "all": ALL}
COMPLEX = ("complex64", "complex128")          # the FFT prims' complex operands
NP = {n: np.dtype(ml_dtypes.bfloat16) if n == "bfloat16" else np.dtype(n) for n in ALL + COMPLEX}


def dtypes_of(prim):
    if prim in ("bitwise_left_shift", "bitwise_right_shift"):
        return INTS
    if prim == "matmul":
        return INTS + FLOATS
    if prim.startswith("linalg_"):      # the frontend sends float32 and float64 only
        return ("float32", "float64")
    if PRIMS[prim].kind == "fft":       # r2c reads floats; c2c and c2r complex values
        return ("float32", "float64") if prim == "fft_r2c" else COMPLEX
    return KIND_DTYPES[PRIMS[prim].dtypes]


# -- operands -------------------------------------------------------------------------------

@dataclass
class Operand:
    base: np.ndarray            # C-contiguous storage
    shape: tuple
    strides: tuple              # in elements
    offset: int = 0             # in elements

    def view(self, base=None):
        base = self.base if base is None else base
        item = base.itemsize
        return np.ndarray(self.shape, base.dtype, base, self.offset * item,
                          tuple(s * item for s in self.strides))


def _cstrides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return tuple(reversed(st))


def dense(a):
    a = np.array(a, order="C")        # (np.ascontiguousarray would make a 0-d array 1-d)
    return Operand(a, a.shape, _cstrides(a.shape))


def transposed(a):
    """a's values in a view with reversed axis order (non-contiguous for ndim >= 2)."""
    base = np.array(np.asarray(a).T, order="C")
    return Operand(base, a.shape, tuple(reversed(_cstrides(base.shape))))


def strided(a, fill):
    """a's values at every other element of a storage twice as long (plus an offset of 1)."""
    a = np.asarray(a)
    n = max(a.size, 1)
    base = np.full(2 * n + 1, fill, dtype=a.dtype)
    base[1:1 + 2 * a.size:2] = a.ravel()
    return Operand(base, a.shape, tuple(2 * s for s in _cstrides(a.shape)), 1)


def broadcast(small, shape):
    """small (a shape broadcastable to `shape`) seen at `shape` with zero strides."""
    small = np.asarray(small)
    full = (1,) * (len(shape) - small.ndim) + small.shape
    base = np.array(small, order="C").reshape(full)
    st = tuple(0 if f == 1 and n != 1 else s for f, n, s in zip(full, shape, _cstrides(full)))
    return Operand(base.ravel().copy() if base.ndim else base, shape, st)


def poison(dtype):
    if dtype == "bool":
        return True
    return np.nan if dtype in FLOATS + COMPLEX else 77


def fresh(shape, dtype):
    return dense(np.full(shape, poison(dtype), dtype=NP[dtype]))


def strided_out(shape, dtype):
    return strided(np.full(shape, poison(dtype), dtype=NP[dtype]), poison(dtype))


@dataclass
class Case:
    prim: str
    label: str
    outs: list
    inputs: list
    params: dict = field(default_factory=dict)


# -- values ---------------------------------------------------------------------------------

def cast(values, dtype):
    return np.asarray(values).astype(NP[dtype])


def rand_values(rng, dtype, shape, domain="any"):
    """Values in `domain`, with NaN/inf/-0.0 sprinkled into floats, ties in integers."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -20), min(info.max, 20)
        if domain == "exponent":
            lo, hi = 0, 4
        elif domain == "base":
            lo, hi = max(info.min, -3), 3
        elif domain == "divisor":
            v = rng.integers(1, 7, shape) * (1 if info.min == 0 else rng.choice([-1, 1], shape))
            return cast(v, dtype)
        elif domain == "shift":
            lo, hi = 0, info.bits - 1
        elif domain == "wide":           # all but the minimum (whose negation overflows)
            lo, hi = info.min + 1, info.max
        return cast(rng.integers(lo, hi, shape, endpoint=True), dtype)
    if domain == "unit":
        v = rng.uniform(-1.2, 1.2, n)
        v[:2] = [1.0, -1.0][: min(2, n)]
    elif domain == "acosh":
        v = rng.uniform(0.5, 6.0, n)
    elif domain == "ties":
        v = rng.integers(-3, 4, n).astype(np.float64)
    elif domain == "exponent":
        v = rng.choice([0.0, 1.0, 2.0, 0.5, -1.0, 3.0, -0.5], n)
    else:
        v = rng.standard_normal(n) * 3
    if domain not in ("exponent",) and n >= 6:
        specials = [np.nan, np.inf, -np.inf, -0.0, 0.0]
        pos = rng.choice(n, size=min(len(specials), n // 6 + 1), replace=False)
        v[pos] = specials[:len(pos)]
    return cast(v.reshape(shape), dtype)


_DOMAIN = {"asin": "unit", "acos": "unit", "atanh": "unit", "erfinv": "unit",
           "acosh": "acosh"}


# -- cases per kind -------------------------------------------------------------------------

_SHAPES = [(), (0,), (7,), (3, 5), (2, 3, 4)]


def _layouts(a, fill):
    yield "dense", dense(a)
    if a.ndim >= 2:
        yield "transposed", transposed(a)
    if a.size:
        yield "strided", strided(a, fill)


def elementwise_cases(rng, prim, dtype):
    nin = {"where": 3}.get(prim, 1 if PRIMS[prim].signature.count(",") == 1 else 2)
    out_dtype = "bool" if prim in ("eq", "ne", "lt", "le", "gt", "ge") else dtype
    for shape in _SHAPES:
        ins = _elementwise_inputs(rng, prim, dtype, shape, nin)
        fill = poison(dtype)
        for label, op in _layouts(ins[0], fill):
            rest = [dense(x) for x in ins[1:]]
            yield Case(prim, f"{shape} {label}", [fresh(shape, out_dtype)], [op] + rest)
        if shape and nin >= 2:     # a stride-0 operand, and an output written through a view
            small = ins[-1][(0,) * (len(shape) - 1)] if len(shape) > 1 else ins[-1][:1]
            yield Case(prim, f"{shape} broadcast", [strided_out(shape, out_dtype)],
                       [dense(x) for x in ins[:-1]] + [broadcast(small, shape)])


def _elementwise_inputs(rng, prim, dtype, shape, nin):
    if prim == "where":
        return [rng.random(shape) < 0.5] + [rand_values(rng, dtype, shape) for _ in range(2)]
    if nin == 1:
        return [rand_values(rng, dtype, shape, _DOMAIN.get(prim, "any"))]
    a_dom, b_dom = "any", "any"
    if prim == "pow":
        a_dom, b_dom = ("base", "exponent") if dtype in INTS else ("any", "exponent")
    elif prim in ("div", "fmod") and dtype in INTS:
        a_dom, b_dom = "wide", "divisor"
    elif prim in ("bitwise_left_shift", "bitwise_right_shift"):
        a_dom, b_dom = "wide", "shift"
    elif prim in ("maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge") and dtype in FLOATS:
        a_dom = b_dom = "ties"
    a = rand_values(rng, dtype, shape, a_dom)
    b = rand_values(rng, dtype, shape, b_dom)
    if prim in ("maximum", "minimum") and dtype in FLOATS and a.size >= 3:
        a.reshape(-1)[0], b.reshape(-1)[1] = np.nan, np.nan     # NaN on either side
    return [a, b]


def _reduce_out_dtype(prim, dtype):
    if prim in ("sum", "prod", "cumsum", "cumprod") and dtype in ("bool",) + INTS:
        return "int64"
    return dtype


def reduction_cases(rng, prim, dtype):
    domain = "ties" if prim in ("amax", "amin", "argmax", "argmin") else "any"
    if prim == "prod" and dtype in FLOATS:
        domain = "exponent"            # products that stay finite in float16
    x = rand_values(rng, dtype, (3, 4, 5), domain)
    if prim in ("argmax", "argmin"):
        for dim in range(3):
            for keepdim in (False, True):
                shape = tuple(1 if (i == dim and keepdim) else n for i, n in enumerate(x.shape)
                              if keepdim or i != dim)
                for label, op in _layouts(x, poison(dtype)):
                    yield Case(prim, f"dim={dim} keepdim={keepdim} {label}",
                               [fresh(shape, "int64")], [op], {"dim": dim, "keepdim": keepdim})
        return
    od = _reduce_out_dtype(prim, dtype)
    for dims in ((0,), (1,), (2,), (0, 2), (0, 1, 2)):
        for keepdim in (False, True):
            shape = tuple(1 if i in dims else n for i, n in enumerate(x.shape)
                          if keepdim or i not in dims)
            for label, op in _layouts(x, poison(dtype)):
                yield Case(prim, f"dims={dims} keepdim={keepdim} {label}", [fresh(shape, od)],
                           [op], {"dims": dims, "keepdim": keepdim})
    if prim in ("sum", "prod"):       # an empty reduction: the identity
        e = rand_values(rng, dtype, (0, 3))
        yield Case(prim, "empty", [fresh((3,), od)], [dense(e)], {"dims": (0,), "keepdim": False})


def scan_cases(rng, prim, dtype):
    domain = "ties" if prim in ("cummax", "cummin") else "any"
    if prim == "cumprod" and dtype in FLOATS:
        domain = "exponent"
    for shape in ((3, 4, 5), (9,), (0,), (4, 0)):
        x = rand_values(rng, dtype, shape, domain)
        if prim in ("cummax", "cummin") and dtype in FLOATS and x.size > 10:
            x.reshape(-1)[[3, 8]] = np.nan            # NaN propagates, later NaN takes the index
        for dim in range(len(shape)):
            for label, op in _layouts(x, poison(dtype)):
                if prim in ("cummax", "cummin"):
                    outs = [fresh(shape, dtype), fresh(shape, "int64")]
                else:
                    outs = [fresh(shape, _reduce_out_dtype(prim, dtype))]
                yield Case(prim, f"{shape} dim={dim} {label}", outs, [op], {"dim": dim})


def matmul_cases(rng, dtype):
    dom = "base" if dtype in INTS else "any"
    for a_shape, b_shape in (((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 0), (0, 4)),
                             ((1, 1), (1, 1)), ((4, 8), (8, 1))):
        a = rand_values(rng, dtype, a_shape, dom) if dtype in INTS else \
            cast(rng.standard_normal(a_shape), dtype)
        b = rand_values(rng, dtype, b_shape, dom) if dtype in INTS else \
            cast(rng.standard_normal(b_shape), dtype)
        out = a_shape[:-1] + b_shape[-1:]
        yield Case("matmul", f"{a_shape}@{b_shape}", [fresh(out, dtype)], [dense(a), dense(b)])
        if len(a_shape) >= 2 and a.size:
            yield Case("matmul", f"{a_shape}@{b_shape} transposed", [fresh(out, dtype)],
                       [transposed(a), transposed(b)])


def gather_cases(rng, dtype):
    x = rand_values(rng, dtype, (4, 5, 6))
    for dim in range(3):
        ishape = [3, 4, 5]
        ishape[dim] = 7
        index = rng.integers(0, x.shape[dim], ishape)
        for label, op in _layouts(x, poison(dtype)):
            yield Case("gather", f"dim={dim} {label}", [fresh(tuple(ishape), dtype)],
                       [op, dense(index)], {"dim": dim})
        yield Case("gather", f"dim={dim} expanded index", [fresh((4, 5, 6), dtype)],
                   [dense(x), broadcast(rng.integers(0, x.shape[dim], (1, 1, 1)), (4, 5, 6))],
                   {"dim": dim})


def scatter_cases(rng, dtype):
    modes = ("none", "sum", "prod", "amax", "amin")
    for reduce in modes:
        dom = "exponent" if reduce == "prod" and dtype in FLOATS else \
            "ties" if dtype in FLOATS else "any"
        out0 = rand_values(rng, dtype, (5, 6), dom)
        for dim, ishape in ((0, (8, 6)), (1, (5, 9)), (0, (3, 2))):
            index = rng.integers(0, 5 if dim == 0 else 6, ishape)    # duplicates certain
            src = rand_values(rng, dtype, ishape, dom)
            if dtype in FLOATS and reduce in ("amax", "amin") and src.size > 4:
                src.reshape(-1)[2] = np.nan
            for out_label, out in (("dense", dense(out0)), ("strided", strided(out0, poison(dtype)))):
                yield Case("scatter_", f"{reduce} dim={dim} {ishape} out {out_label}", [out],
                           [dense(index), dense(src)], {"dim": dim, "reduce": reduce})
        yield Case("scatter_", f"{reduce} expanded index, strided src", [dense(out0)],
                   [broadcast(rng.integers(0, 5, (1, 6)), (4, 6)),
                    strided(rand_values(rng, dtype, (4, 6), dom), poison(dtype))],
                   {"dim": 0, "reduce": reduce})


def nonzero_cases(rng, dtype):
    for shape in ((3, 4), (11,), (2, 3, 2), (0, 3), ()):
        x = rand_values(rng, dtype, shape, "ties" if dtype in FLOATS else "any")
        if x.size >= 3 and dtype in FLOATS:
            x.reshape(-1)[:3] = [-0.0, np.nan, 0.0]
        n = int(np.count_nonzero(np.asarray(x, dtype=np.float64) != 0)) if dtype in FLOATS \
            else int(np.count_nonzero(x))
        for label, op in _layouts(x, poison(dtype)):
            yield Case("nonzero", f"{shape} {label}", [fresh((n, len(shape)), "int64")], [op])


def sort_cases(rng, dtype):
    for shape in ((3, 7), (12,), (0,), (2, 3, 4)):
        x = rand_values(rng, dtype, shape, "ties" if dtype in FLOATS else "any")
        if dtype in FLOATS and x.size > 8:
            x.reshape(-1)[[1, 5, 7]] = [-0.0, np.nan, -np.nan]     # every NaN sorts last
        for dim in range(len(shape)):
            for descending in (False, True):
                for label, op in _layouts(x, poison(dtype)):
                    yield Case("sort", f"{shape} dim={dim} desc={descending} {label}",
                               [fresh(shape, dtype), fresh(shape, "int64")], [op],
                               {"dim": dim, "descending": descending})


def searchsorted_cases(rng, dtype):
    for b, m, n in ((3, 6, 5), (2, 1, 4), (2, 0, 3), (1, 9, 9)):
        seq = rand_values(rng, dtype, (b, m), "ties" if dtype in FLOATS else "any")
        if dtype in FLOATS and m >= 3:
            seq[:, -1] = np.nan
        seq = np.sort(seq.astype(np.float64) if dtype == "bfloat16" else seq, axis=1).astype(NP[dtype])
        vals = rand_values(rng, dtype, (b, n), "ties" if dtype in FLOATS else "any")
        if m:
            vals[:, :1] = seq[:, :1]            # exact hits
        for right in (False, True):
            yield Case("searchsorted", f"{(b, m, n)} right={right}", [fresh((b, n), "int64")],
                       [dense(seq), dense(vals)], {"right": right})
            if m:
                yield Case("searchsorted", f"{(b, m, n)} right={right} transposed values",
                           [fresh((b, n), "int64")], [dense(seq), transposed(vals)],
                           {"right": right})


def cases(prim, dtype, seed=0):
    rng = np.random.default_rng([seed, sum(map(ord, prim)), (ALL + COMPLEX).index(dtype)])
    kind = PRIMS[prim].kind
    if kind == "fft":
        return list(fft_cases(rng, prim, dtype))
    if kind == "elementwise":
        return list(elementwise_cases(rng, prim, dtype))
    if kind == "reduction":
        return list(reduction_cases(rng, prim, dtype))
    if kind == "scan":
        return list(scan_cases(rng, prim, dtype))
    if prim.startswith("linalg_"):
        return list(linalg_cases(rng, prim, dtype))
    return list({"matmul": matmul_cases, "gather": gather_cases, "scatter_": scatter_cases,
                 "nonzero": nonzero_cases, "sort": sort_cases,
                 "searchsorted": searchsorted_cases}[prim](rng, dtype))


def fft_cases(rng, prim, dtype):
    """Each norm mode and direction, one and two dims, dense and transposed inputs."""
    real = "float32" if dtype in ("float32", "complex64") else "float64"
    cplx = "complex64" if real == "float32" else "complex128"

    def values(shape, dt):
        v = rng.standard_normal(shape)
        return cast(v + 1j * rng.standard_normal(shape) if dt in COMPLEX else v, dt)

    for norm in ("none", "by_n", "by_root_n"):
        for dims in ((1,), (0, 1)):
            if prim == "fft_c2c":
                x = values((3, 8), cplx)
                for forward in (True, False):
                    for label, op in (("dense", dense(x)), ("transposed", transposed(x))):
                        yield Case(prim, f"{norm} dims={dims} forward={forward} {label}",
                                   [fresh(x.shape, cplx)], [op],
                                   {"dims": dims, "forward": forward, "norm": norm})
            elif prim == "fft_r2c":
                x = values((3, 8), real)
                for onesided in (True, False):
                    out = (3, 5) if onesided else (3, 8)
                    yield Case(prim, f"{norm} dims={dims} onesided={onesided}",
                               [fresh(out, cplx)], [transposed(x)],
                               {"dims": dims, "norm": norm, "onesided": onesided})
            else:
                x = values((3, 5), cplx)
                for n in (8, 9):
                    yield Case(prim, f"{norm} dims={dims} n={n}", [fresh((3, n), real)],
                               [dense(x)], {"dims": dims, "norm": norm})


def linalg_cases(rng, prim, dtype):
    """Well-conditioned batches (and one failing matrix where the prim reports info)."""
    def mat(shape):
        return cast(rng.standard_normal(shape), dtype)

    n = 4
    spd = mat((2, n, n))
    spd = (spd @ np.swapaxes(spd, -1, -2) + n * np.eye(n)).astype(NP[dtype])
    if prim == "linalg_cholesky":
        bad = -spd
        for a, label in ((spd, "spd"), (bad, "not positive-definite")):
            yield Case(prim, label, [fresh(a.shape, dtype), fresh(a.shape[:-2], "int32")],
                       [dense(a)])
    elif prim == "linalg_eigh":
        for upper in (False, True):
            yield Case(prim, f"upper={upper}", [fresh(spd.shape[:-1], dtype),
                                                fresh(spd.shape, dtype)], [dense(spd)],
                       {"upper": upper})
    elif prim == "linalg_eig":       # complex results of a real and of a complex matrix
        c = "complex64" if dtype == "float32" else "complex128"
        z = cast(rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n)), c)
        for a, label in ((mat((2, n, n)), "real"), (z, "complex")):
            yield Case(prim, label, [fresh((2, n), c), fresh((2, n, n), c)], [dense(a)])
    elif prim == "linalg_svd":
        a = mat((2, 5, 3))
        for full in (False, True):
            u, v = ((5, 5), (3, 3)) if full else ((5, 3), (3, 3))
            yield Case(prim, f"full={full}", [fresh((2,) + u, dtype), fresh((2, 3), dtype),
                                              fresh((2,) + v, dtype)], [dense(a)],
                       {"full_matrices": full})
    elif prim == "linalg_qr":
        a = mat((2, 5, 3))
        yield Case(prim, "reduced", [fresh((2, 5, 3), dtype), fresh((2, 3, 3), dtype)],
                   [dense(a)], {"mode": "reduced"})
        yield Case(prim, "complete", [fresh((2, 5, 5), dtype), fresh((2, 5, 3), dtype)],
                   [dense(a)], {"mode": "complete"})
    elif prim == "linalg_lu_factor":
        for shape in ((2, 4, 4), (3, 5), (5, 3)):
            a = mat(shape)
            k = min(shape[-2:])
            yield Case(prim, f"{shape}", [fresh(shape, dtype), fresh(shape[:-2] + (k,), "int32"),
                                          fresh(shape[:-2], "int32")], [dense(a)])
    elif prim == "linalg_solve_triangular":
        b = mat((2, n, 3))
        for upper in (False, True):
            yield Case(prim, f"left upper={upper}", [fresh(b.shape, dtype)],
                       [dense(spd), dense(b)], {"upper": upper, "left": True,
                                                "unitriangular": False})
        br = mat((2, 3, n))
        yield Case(prim, "right unit", [fresh(br.shape, dtype)], [dense(spd), dense(br)],
                   {"upper": True, "left": False, "unitriangular": True})


# -- running and comparing ------------------------------------------------------------------

def run(backend, kernel, case):
    """Run one case on a backend; return every output's whole storage on the host."""
    def place(op):
        storage = backend.from_host(op.base, 0)
        return storage, backend.as_strided(storage, op.shape, op.strides, op.offset)

    outs = [place(o) for o in case.outs]
    ins = [place(i)[1] for i in case.inputs]
    kernel(*(v for _, v in outs), *ins, **case.params)
    return [np.array(backend.to_host(s)) for s, _ in outs]


def tolerance(dtype, exact):
    if exact or dtype not in FLOATS:
        return 0.0, 0.0
    return {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
            "float32": (2e-5, 1e-5), "float64": (1e-12, 1e-12)}[dtype]


def assert_close(got, want, exact, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    name = "bfloat16" if got.dtype == NP["bfloat16"] else str(got.dtype)
    if name not in FLOATS:
        bad = got != want
        assert not bad.any(), f"{what}: {int(bad.sum())} of {got.size} differ; got " \
                              f"{got[bad][:5]} want {want[bad][:5]}"
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    gnan, wnan = np.isnan(g), np.isnan(w)
    assert (gnan == wnan).all(), f"{what}: NaN at different places; got {g[gnan != wnan][:5]} " \
                                 f"want {w[gnan != wnan][:5]}"
    rtol, atol = tolerance(name, exact)
    ok = gnan | (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
    assert ok.all(), f"{what}: {int((~ok).sum())} of {g.size} differ beyond rtol={rtol}, " \
                     f"atol={atol}; got {g[~ok][:5]} want {w[~ok][:5]}"
