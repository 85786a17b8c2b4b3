"""The prim catalogue: the kernels every backend implements, with exact semantics.

Calling convention for every kernel: `fn(*outs, *inputs, **params)`. The frontend
has already promoted dtypes, broadcast shapes, normalised dims and allocated the
outputs, so a kernel never infers a shape. Outputs are fresh C-contiguous storages,
except for elementwise prims, whose `out` may be any strided view of the inputs'
shape (that is how in-place ops run without a copy). Inputs may be any strided
views, including stride 0 (broadcast).
"""
from __future__ import annotations

from dataclasses import dataclass

from .fft_prims import fft_prims


@dataclass(frozen=True)
class PrimSpec:
    name: str
    kind: str          # elementwise | reduction | scan | linalg | indexing | sort
    signature: str
    doc: str
    dtypes: str        # which input dtypes the frontend sends: float | numeric | integral |
    #                    integer (no bool) | all (| complex: complex64 / complex128 only). The
    #                    one statement of the prim's dtype rule: its frontend row reads it
    #                    from here (ops rows may not restate it).


MEMORY_METHODS = ("empty", "from_host", "to_host", "as_strided", "copy_", "fill_")

_UNARY_FLOAT = {
    "exp": "e**x", "exp2": "2**x", "expm1": "e**x - 1, accurate near 0",
    "log": "natural log; log(0) = -inf, log(<0) = nan", "log2": "base-2 log",
    "log10": "base-10 log", "log1p": "log(1 + x), accurate near 0",
    "sqrt": "square root; sqrt(<0) = nan", "sin": "sine", "cos": "cosine", "tan": "tangent",
    "asin": "arcsine", "acos": "arccosine", "atan": "arctangent",
    "sinh": "hyperbolic sine", "cosh": "hyperbolic cosine", "tanh": "hyperbolic tangent",
    "asinh": "inverse hyperbolic sine", "acosh": "inverse hyperbolic cosine",
    "atanh": "inverse hyperbolic tangent", "erf": "error function",
    "erfc": "1 - erf(x), accurate for large x", "erfinv": "inverse of erf on (-1, 1); +-inf at +-1",
}
# rounding: the kernels get floats; the function forms return integer inputs unchanged
# (a copy, as PyTorch) and refuse bool before any kernel
_ROUNDING = {"floor": "round down", "ceil": "round up", "round": "round half to even",
             "trunc": "round toward zero"}
_UNARY_OTHER = {
    "neg": ("numeric", "-x (integers wrap)"),
    "abs": ("numeric", "|x| (integers wrap at the minimum); complex x: out has the real dtype"),
    "bitwise_not": ("integral", "~x; for bool, logical not"),
}
_BINARY = {
    "add": ("all", "a + b; for bool, logical or"),
    "sub": ("numeric", "a - b"),
    "mul": ("all", "a * b; for bool, logical and"),
    "div": ("numeric", "floats: IEEE a / b; integers: division truncating toward zero"),
    "fmod": ("numeric", "C fmod: remainder with the sign of a; integers: C %"),
    "pow": ("numeric", "a ** b; integers: exact integer power (b >= 0)"),
    "maximum": ("all", "larger of a, b; NaN if either is NaN"),
    "minimum": ("all", "smaller of a, b; NaN if either is NaN"),
    "atan2": ("float", "atan2(a, b), the angle of (b, a)"),
    "bitwise_and": ("integral", "a & b (bool included)"),
    "bitwise_or": ("integral", "a | b (bool included)"),
    "bitwise_xor": ("integral", "a ^ b (bool included)"),
    "bitwise_left_shift": ("integer", "a << b (not bool, as PyTorch)"),
    "bitwise_right_shift": ("integer", "a >> b, arithmetic for signed types (not bool)"),
    "gcd": ("integer", "greatest common divisor of |a| and |b| (non-negative); gcd(0, 0) = 0"),
}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _catalogue():
    specs = {}

    def add(name, kind, signature, doc, dtypes):
        specs[name] = PrimSpec(name, kind, signature, doc, dtypes)

    for name, doc in _UNARY_FLOAT.items():
        add(name, "elementwise", f"{name}(out, x)", doc, "float")
    for name, doc in _ROUNDING.items():
        add(name, "elementwise", f"{name}(out, x)",
            doc + " (floats; torch.%s returns integers unchanged)" % name, "float")
    for name, (dtypes, doc) in _UNARY_OTHER.items():
        add(name, "elementwise", f"{name}(out, x)", doc, dtypes)
    for name, (dtypes, doc) in _BINARY.items():
        add(name, "elementwise", f"{name}(out, a, b)", doc, dtypes)
    for name, sym in _COMPARE.items():
        add(name, "elementwise", f"{name}(out: bool, a, b)",
            f"a {sym} b, written as bool; NaN compares unequal", "all")
    add("where", "elementwise", "where(out, cond: bool, a, b)", "cond ? a : b", "all")

    for name, doc in [("sum", "sum; out may be wider than x (ints and bool sum into int64); "
                               "accumulate float16/bfloat16 in float32"),
                      ("prod", "product; out may be wider than x as for sum"),
                      ("amax", "maximum; NaN if any reduced element is NaN"),
                      ("amin", "minimum; NaN if any reduced element is NaN")]:
        add(name, "reduction", f"{name}(out, x, *, dims: tuple[int], keepdim: bool)",
            doc + ". dims are sorted, unique, non-negative and not empty", "all")
    for name, which in [("argmax", "largest"), ("argmin", "smallest")]:
        add(name, "reduction", f"{name}(out: int64, x, *, dim: int, keepdim: bool)",
            f"index of the {which} element along dim; the first one on ties; "
            "a NaN counts as the extreme (the first NaN wins)", "all")
    for name, doc in [("cumsum", "inclusive running sum; out may be wider than x"),
                      ("cumprod", "inclusive running product; out may be wider than x")]:
        add(name, "scan", f"{name}(out, x, *, dim: int)", doc, "all")
    for name, cmp in [("cummax", ">="), ("cummin", "<=")]:
        add(name, "scan", f"{name}(values, indices: int64, x, *, dim: int)",
            f"running extreme and its index; an element `{cmp}` the running value "
            "replaces it (so ties take the later index); NaN propagates and its index is taken",
            "all")
    add("matmul", "linalg", "matmul(out, a, b)",
        "a: (*B, M, K), b: (*B, K, N), identical batch dims B (possibly none) -> out (*B, M, N); "
        "accumulate float16/bfloat16 in float32", "numeric")
    add("gather", "indexing", "gather(out, x, index: int64, *, dim: int)",
        "out[i][j][k] = x[index[i][j][k]][j][k] (for dim 0); index has x's ndim, out has "
        "index's shape; indices are in range (the frontend checks)", "all")
    add("scatter_", "indexing", "scatter_(out, index: int64, src, *, dim: int, reduce: str)",
        "in place on out: out[index[i][j]][j] (op)= src[i][j] for dim 0, reduce one of "
        "'none' (assign; the last write wins on duplicate indices), 'sum', 'prod', 'amax', 'amin'; "
        "index and src have one shape; indices are in range", "all")
    add("nonzero", "indexing", "nonzero(out: int64 (N, x.ndim), x)",
        "coordinates of the non-zero elements in C order; N was counted by the frontend", "all")
    add("sort", "sort", "sort(values, indices: int64, x, *, dim: int, descending: bool)",
        "stable sort along dim (equal elements keep their order); NaN is larger than every "
        "number (last ascending, first descending)", "all")
    add("searchsorted", "sort", "searchsorted(out: int64, sorted_seq, values, *, right: bool)",
        "sorted_seq (B, M), values (B, N) -> out (B, N): for each value the first index i with "
        "seq[i] >= v (right=False) or seq[i] > v (right=True)", "all")
    _linalg_prims(add)
    fft_prims(add)
    for name, (_, doc) in SPECIAL_UNARY.items():
        add(name, "elementwise", f"{name}(out, x)", doc, "float")
    for name, (_, doc) in SPECIAL_BINARY.items():
        add(name, "elementwise", f"{name}(out, a, b)", doc, "float")
    # not in SPECIAL_UNARY: scipy's airy gives (Ai, Ai', Bi, Bi'), and cupyx has no Airy
    add("special_airy_ai", "elementwise", "special_airy_ai(out, x)",
        "Airy function of the first kind Ai(x) (scipy.special.airy's first result)", "float")
    return specs


# special functions: prim name -> (scipy.special's name, semantics); floats in and out
SPECIAL_UNARY = {
    "lgamma": ("gammaln", "log |Gamma(x)|; +inf at the poles"),
    "digamma": ("psi", "Gamma'(x) / Gamma(x); -inf at 0 (PyTorch), NaN at negative integers"),
    "i0": ("i0", "modified Bessel function of the first kind, order 0"),
    "special_i0e": ("i0e", "exp(-|x|) i0(x)"),
    "special_i1": ("i1", "modified Bessel function of the first kind, order 1"),
    "special_i1e": ("i1e", "exp(-|x|) i1(x)"),
    "special_erfcx": ("erfcx", "exp(x^2) erfc(x), without overflow"),
    "special_ndtri": ("ndtri", "inverse of the standard normal CDF on (0, 1)"),
    "special_log_ndtr": ("log_ndtr", "log of the standard normal CDF, accurate in the tails"),
    "special_bessel_j0": ("j0", "Bessel function of the first kind, order 0"),
    "special_bessel_j1": ("j1", "Bessel function of the first kind, order 1"),
    "special_bessel_y0": ("y0", "Bessel function of the second kind, order 0"),
    "special_bessel_y1": ("y1", "Bessel function of the second kind, order 1"),
    "special_modified_bessel_k0": ("k0", "modified Bessel function of the second kind, order 0"),
    "special_modified_bessel_k1": ("k1", "modified Bessel function of the second kind, order 1"),
    "special_scaled_modified_bessel_k0": ("k0e", "exp(x) k0(x)"),
    "special_scaled_modified_bessel_k1": ("k1e", "exp(x) k1(x)"),
}
SPECIAL_BINARY = {
    "special_zeta": ("zeta", "Hurwitz zeta function zeta(a, b) = sum_k (k + b)^-a"),
    "igamma": ("gammainc", "regularized lower incomplete gamma P(a, b)"),
    "igammac": ("gammaincc", "regularized upper incomplete gamma Q(a, b)"),
    "nextafter": ("nextafter", "the next representable float after a toward b"),
}


def _linalg_prims(add):
    """Decompositions and solvers over a batch (*B, m, n) (batch dims identical on every
    operand); `info` outputs (int32, one per matrix) carry LAPACK's failure codes.
    Every one also takes complex64 / complex128 operands on a device that declares them
    (Hermitian for cholesky / eigh, conjugate transposes for "T"); eigh's w and svd's S
    then have the real dtype of A."""
    add("linalg_cholesky", "linalg", "linalg_cholesky(L, info: int32 (*B,), A: (*B, n, n))",
        "lower Cholesky factor of a symmetric positive-definite A (its lower triangle is read); "
        "info k > 0: the leading minor of order k is not positive-definite", "float")
    add("linalg_eigh", "linalg", "linalg_eigh(w (*B, n), V (*B, n, n), A, *, upper: bool)",
        "eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric A, from "
        "its lower (upper=False) or upper triangle", "float")
    add("linalg_eig", "linalg", "linalg_eig(L: complex (*B, n), V: complex (*B, n, n), A)",
        "LAPACK geev: eigenvalues and unit-norm right eigenvectors (columns) of a general A, "
        "real or complex, in geev's order and phases; the outputs are A's complex dtype",
        "float")
    add("linalg_svd", "linalg", "linalg_svd(U, S, Vh, A: (*B, m, n), *, full_matrices: bool)",
        "A = U diag(S) Vh, S descending, k = min(m, n); U (*B, m, m or k), Vh (*B, n or k, n)",
        "float")
    add("linalg_qr", "linalg", "linalg_qr(Q, R, A: (*B, m, n), *, mode: 'reduced'|'complete')",
        "A = Q R, Q orthonormal columns (m x k or m x m), R upper triangular (k x n or m x n)",
        "float")
    add("linalg_lu_factor", "linalg",
        "linalg_lu_factor(LU, pivots: int32 (*B, k), info: int32 (*B,), A: (*B, m, n))",
        "LAPACK getrf: P A = L U with partial pivoting, L (unit diagonal) and U packed in LU, "
        "pivots 1-based row swaps; info k > 0: U[k-1, k-1] is exactly zero", "float")
    add("linalg_solve_triangular", "linalg",
        "linalg_solve_triangular(X, A: (*B, n, n), B, *, upper, left, unitriangular)",
        "X with A X = B (left) or X A = B, A triangular (only that triangle is read; a unit "
        "diagonal is assumed with unitriangular); a zero pivot divides by zero", "float")


PRIMS: dict[str, PrimSpec] = _catalogue()
