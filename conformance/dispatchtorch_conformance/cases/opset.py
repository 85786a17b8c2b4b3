"""The rest of the reference op set (issue 6): elementwise composites, statistics,
norms, scans, order statistics, linear algebra composites, shape ops, indexing
composites, counting and the factories. Most are composites: on a backend they check
that the decomposition runs (and agrees with the CPU); the prims they use (sort,
cumsum, searchsorted, scatter_, ...) are checked here with their public callers."""
import numpy as np

import dispatchtorch as torch

from .. import samples as S
from ..case import Arr, Case, Tol

ORDER = Tol("composites sum, square and divide in the backend's order", float32=(1e-5, 1e-5),
            float64=(1e-7, 1e-7))


def _pair(g, shape_a=(4, 5), shape_b=(5,), low=None, high=None):
    return g.arr(shape_a, low, high), g.arr(shape_b, low, high)


# -- elementwise ---------------------------------------------------------------------------------

def _lerp_samples(g):
    a = g.arr
    yield g.sample("scalar-weight", a((4, 5)), a((4, 5)), 0.3)
    yield g.sample("high-weight", a((4, 5)), a((5,)), 0.8)
    yield g.sample("tensor-weight", a((4, 5)), a((5,)), a((4, 1), 0, 1))
    yield g.sample("0d", a(()), a(()), a(()))
    yield g.sample("T", a((5, 6), layout="T"), a((5, 6), layout="step"), 0.5)
    yield g.sample("empty", a((0, 3)), a((3,)), 0.5)


def _nan_to_num_samples(g):
    yield from S.unary()(g)
    yield g.sample("replacements", g.special(), nan=1.5, posinf=9.0, neginf=-9.0)


def _no_scalar_binary(low=None, high=None):
    return S.binary(low, high, scalars=())


CASES = [
    Case("floor_divide", torch.floor_divide, S.binary(nonzero_rhs=True), dtypes="numeric",
         inplace="floor_divide_"),
    Case("remainder", torch.remainder, S.binary(nonzero_rhs=True, extremes=False), dtypes="numeric",
         inplace="remainder_"),
    Case("frac", torch.frac, S.unary(-10, 10), dtypes="floating", inplace="frac_"),
    Case("fmax", torch.fmax, _no_scalar_binary(), grad=False),
    Case("fmin", torch.fmin, _no_scalar_binary(), grad=False),
    Case("hypot", torch.hypot, _no_scalar_binary(), dtypes="floating", inplace="hypot_"),
    Case("lerp", torch.lerp, _lerp_samples, dtypes="floating"),
    Case("logit", torch.logit, S.unary(0.05, 0.95, extremes=False),
         inplace="logit_"),
    Case("logit", lambda x: torch.logit(x, eps=0.1), S.unary(0, 1), name="logit_eps",
         dtypes="floating"),
    Case("nan_to_num", torch.nan_to_num, _nan_to_num_samples, inplace="nan_to_num_"),
    Case("isnan", torch.isnan, S.unary()), Case("isinf", torch.isinf, S.unary()),
    Case("isfinite", torch.isfinite, S.unary()), Case("isposinf", torch.isposinf, S.unary()),
    Case("isneginf", torch.isneginf, S.unary()),
    Case("logical_not", torch.logical_not, S.unary(), inplace="logical_not_"),
    Case("logaddexp", torch.logaddexp, _no_scalar_binary(), dtypes="floating"),
    Case("logical_and", torch.logical_and, _no_scalar_binary(), inplace="logical_and_"),
    Case("logical_or", torch.logical_or, _no_scalar_binary(), inplace="logical_or_"),
    Case("logical_xor", torch.logical_xor, _no_scalar_binary(), inplace="logical_xor_"),
]


# -- reductions, statistics, norms ---------------------------------------------------------------

def _stat_samples(g):
    a = g.arr
    x = a((3, 4, 5))
    yield g.sample("all", x)
    yield g.sample("dim1", x, 1)
    yield g.sample("dims02-keep", x, (0, 2), keepdim=True)
    yield g.sample("correction0", x, -1, correction=0)
    yield g.sample("correction2", x, 0, correction=2)
    yield g.sample("unbiased-false", a((4, 6)), 1, False)
    yield g.sample("T", a((5, 7), layout="T"), 0)
    yield g.sample("step", a((4, 9), layout="step"), -1)
    yield g.sample("one-row", a((1, 6)), 1)
    yield g.sample("large", g.arr(S.LARGE, 0.5, 1.5), 1).skip_checks(*S.NO_LARGE)


def _logsumexp_samples(g):
    a = g.arr
    yield g.sample("dim1", a((3, 4, 5)), 1)
    yield g.sample("dims-keep", a((3, 4, 5)), (0, 2), True)
    yield g.sample("0d", a(()), 0)
    yield g.sample("large-values", a((4, 6), 80, 90), -1)
    yield g.sample("T", a((5, 7), layout="T"), 0)
    yield g.sample("empty", a((0, 3)), 0)
    yield g.sample("extremes", g.special(), 0).skip_checks("grad")


def _vector_norm(ord_):
    def gen(g):
        a = g.arr
        yield g.sample("all", a((3, 4, 5)), ord_)
        yield g.sample("dim1", a((3, 4, 5)), ord_, 1)
        yield g.sample("dims-keep", a((3, 4, 5)), ord_, (0, 2), True)
        yield g.sample("0d", a(()), ord_)
        yield g.sample("T", a((5, 7), layout="T"), ord_, 0)
        yield g.sample("large", g.arr(S.LARGE, 0.5, 1.5), ord_, 1).skip_checks(*S.NO_LARGE)
    return gen


def _matrix_norm_samples(g):
    a = g.arr
    for o in ("fro", 1, -1, float("inf"), float("-inf")):
        yield g.sample(f"ord{o}", a((2, 4, 5)), o)
    yield g.sample("T", a((5, 7), layout="T"), 1)


def _scan_samples(g):
    a = g.arr
    yield g.sample("dim1", a((3, 4, 5), -1.5, 1.5), 1)
    yield g.sample("dim-1", a((4, 6), -1.5, 1.5), -1)
    yield g.sample("0d", a(()), 0)
    yield g.sample("empty", a((0, 3)), 1)
    yield g.sample("empty-dim", a((3, 0, 2)), 1)
    yield g.sample("empty-dim0", a((0, 4)), 0)
    yield g.sample("perm4", a((2, 3, 4, 5), -1.5, 1.5, layout="perm"), 2)
    yield g.sample("T", a((5, 7), -1.5, 1.5, layout="T"), 0)
    yield g.sample("step", a((4, 9), -1.5, 1.5, layout="step"), 1)
    yield g.sample("large", g.arr((3, S.LARGE[1]), 0.999, 1.001), 1).skip_checks(*S.NO_LARGE)
    yield g.sample("extremes", g.special(), 0).skip_checks("grad")


def _median_samples(g):
    a = g.arr
    yield g.sample("3d", a((3, 4, 5)))
    yield g.sample("0d", a(()))
    yield g.sample("T", a((5, 7), layout="T"))
    yield g.sample("extremes", g.special()).skip_checks("grad")


def _distinct(g, shape, layout="contig"):
    """Values without ties (order statistics then have one right index)."""
    n = int(np.prod(shape)) if shape else 1
    v = (g.rng.permutation(n) - n // 2).reshape(shape)
    if not g.floating:
        v = np.abs(v) if g.dtype == "uint8" else v
        v = np.clip(v, -100, 100)
    return Arr(v.astype(g.np), layout)


def _median_dim_samples(g):
    d = _distinct
    yield g.sample("dim1", d(g, (3, 5, 4)), 1)
    yield g.sample("dim0-keep", d(g, (5, 4)), 0, True)
    yield g.sample("0d", d(g, ()), 0)
    yield g.sample("T", d(g, (5, 7), "T"), -1)


def _kth_samples(g):
    d = _distinct
    yield g.sample("k2", d(g, (3, 6)), 2)
    yield g.sample("k1-dim0-keep", d(g, (5, 4)), 1, 0, True)
    yield g.sample("T", d(g, (5, 7), "T"), 3, 0)
    yield g.sample("k-too-big", d(g, (3, 4)), 5).raises(RuntimeError)


def _topk_samples(g):
    d = _distinct
    yield g.sample("k2", d(g, (3, 6)), 2)
    yield g.sample("smallest-dim0", d(g, (5, 4)), 3, 0, False)
    yield g.sample("k0", d(g, (3, 4)), 0)
    yield g.sample("T", d(g, (5, 7), "T"), 2, 0)
    yield g.sample("k-too-big", d(g, (3, 4)), 5).raises(RuntimeError)


def _sort_samples(g):
    a = g.arr
    yield g.sample("dim-1", a((4, 7)))
    yield g.sample("dim0-desc", a((6, 3)), 0, True)
    yield g.sample("ties", Arr(g.rng.integers(0, 3, (5, 6)).astype(g.np)), 1)
    yield g.sample("0d", a(()))
    yield g.sample("empty", a((0, 3)), 0)
    yield g.sample("empty-dim", a((3, 0, 2)), 1)
    yield g.sample("T", a((5, 7), layout="T"), 0)
    yield g.sample("perm4", a((2, 3, 4, 5), layout="perm"), 2)
    yield g.sample("extremes", g.special()).skip_checks("grad")
    yield g.sample("large", a((3, S.LARGE[1])), -1).skip_checks(*S.NO_LARGE)


CASES += [
    Case("mean", torch.mean, S.reduction(), dtypes="floating", tol=ORDER),
    Case("max", torch.max, S.reduction(tuple_dims=False, keepdim=False,
                                       empty_raises=(RuntimeError, IndexError))),
    Case("min", torch.min, S.reduction(tuple_dims=False, keepdim=False,
                                       empty_raises=(RuntimeError, IndexError))),
    Case("all", torch.all, S.reduction(), inplace=None),
    Case("any", torch.any, S.reduction()),
    Case("aminmax", lambda x, dim=None, keepdim=False: torch.aminmax(x, dim=dim, keepdim=keepdim),
         S.reduction(tuple_dims=False, empty_raises=(RuntimeError, IndexError))),
    Case("count_nonzero", torch.count_nonzero, S.reduction(keepdim=False)),
    Case("nansum", torch.nansum, S.reduction(), tol=ORDER),
    Case("nanmean", torch.nanmean, S.reduction(), dtypes="floating", tol=ORDER),
    Case("var", torch.var, _stat_samples, dtypes="floating", tol=ORDER),
    Case("std", torch.std, _stat_samples, dtypes="floating", tol=ORDER),
    Case("var_mean", torch.var_mean, _stat_samples, dtypes="floating", tol=ORDER),
    Case("std_mean", torch.std_mean, _stat_samples, dtypes="floating", tol=ORDER),
    Case("logsumexp", torch.logsumexp, _logsumexp_samples, tol=ORDER),
    Case("norm", torch.norm, S.reduction(), dtypes="floating", tol=ORDER),
    Case("linalg_matrix_norm", lambda *a, **k: torch.linalg.matrix_norm(*a, **k),
         _matrix_norm_samples,
         dtypes="floating", tol=ORDER),
    Case("linalg_norm", lambda x, **k: torch.linalg.norm(x, **k),
         S.reduction(tuple_dims=False, keepdim=False),
         dtypes="floating", tol=ORDER),
    Case("cumsum", torch.cumsum, _scan_samples, inplace="cumsum_", tol=ORDER),
    Case("cumprod", torch.cumprod, _scan_samples, inplace="cumprod_", tol=ORDER),
    Case("cummax", torch.cummax, _scan_samples),
    Case("cummin", torch.cummin, _scan_samples),
    Case("logcumsumexp", torch.logcumsumexp, _scan_samples, dtypes="floating", tol=ORDER),
    Case("median", torch.median, _median_samples, dtypes="numeric"),
    Case("nanmedian", torch.nanmedian, _median_samples, dtypes="numeric"),
    Case("median_dim", torch.median, _median_dim_samples, dtypes="numeric"),
    Case("nanmedian_dim", torch.nanmedian, _median_dim_samples, dtypes="numeric"),
    Case("kthvalue", torch.kthvalue, _kth_samples, dtypes="numeric"),
    Case("topk", torch.topk, _topk_samples, dtypes="numeric"),
    # stable=True: the samples have ties (-0.0 and 0.0 among the extremes), whose order
    # only a stable sort defines
    Case("sort", lambda x, dim=-1, descending=False: torch.sort(x, stable=True, dim=dim,
                                                                 descending=descending),
         _sort_samples),
    Case("sort", lambda x, *a: torch.argsort(x, *a, stable=True) if not a else
         torch.argsort(x, dim=a[0], descending=a[1] if len(a) > 1 else False, stable=True),
         _sort_samples, name="argsort", grad=False),
]
for _o in (2, 1, float("inf"), float("-inf"), 0, 3, 0.5):
    CASES.append(Case("linalg_vector_norm", lambda *a, **k: torch.linalg.vector_norm(*a, **k),
                      _vector_norm(_o),
                      name=f"linalg_vector_norm_ord{_o}", dtypes="floating", tol=ORDER,
                      grad=_o != 0))


# -- linear algebra ---------------------------------------------------------------------------------

def _dot_samples(g):
    a = g.arr
    yield g.sample("vectors", a((7,)), a((7,)))
    yield g.sample("step", a((6,), layout="step"), a((6,)))
    yield g.sample("empty", a((0,)), a((0,)))
    yield g.sample("mismatch", a((3,)), a((4,))).raises(RuntimeError)


def _mv_samples(g):
    a = g.arr
    yield g.sample("prime", a((7, 13)), a((13,)))
    yield g.sample("T", a((5, 6), layout="T"), a((6,)))
    yield g.sample("empty", a((0, 4)), a((4,)))
    yield g.sample("mismatch", a((3, 4)), a((3,))).raises(RuntimeError)


def _outer_samples(g):
    a = g.arr
    yield g.sample("vectors", a((5,)), a((7,)))
    yield g.sample("empty", a((0,)), a((3,)))
    yield g.sample("step", a((4,), layout="step"), a((3,)))


def _addmm_samples(g):
    a = g.arr
    yield g.sample("plain", a((3, 4)), a((3, 5)), a((5, 4)))
    yield g.sample("bcast-input", a((4,)), a((3, 5)), a((5, 4)), beta=2, alpha=3)
    yield g.sample("beta0", a((3, 4)), a((3, 5)), a((5, 4)), beta=0)
    yield g.sample("T", a((3, 4)), a((3, 5), layout="T"), a((5, 4)))


def _baddbmm_samples(g):
    a = g.arr
    yield g.sample("plain", a((2, 3, 4)), a((2, 3, 5)), a((2, 5, 4)))
    yield g.sample("bcast-input", a((1, 4)), a((2, 3, 5)), a((2, 5, 4)), beta=2, alpha=3)


def _addmv_samples(g):
    a = g.arr
    yield g.sample("plain", a((3,)), a((3, 5)), a((5,)))
    yield g.sample("scaled", a((1,)), a((3, 5)), a((5,)), beta=2, alpha=3)


_EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
           ("i,i->", [(6,), (6,)]), ("i,j->ij", [(3,), (4,)]), ("ii->i", [(4, 4)]),
           ("ij->", [(3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
           ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ij->ji", [(3, 5)])]


def _einsum_samples(g):
    for eq, shapes in _EINSUM:
        yield g.sample(eq, eq, *(g.arr(s, -2, 2) for s in shapes))
    yield g.sample("T", "ij,jk->ik", g.arr((4, 3), layout="T"), g.arr((3, 2)))
    yield g.sample("mismatch", "i,i->", g.arr((3,)), g.arr((4,))).raises(RuntimeError)


def _tensordot_samples(g):
    a = g.arr
    yield g.sample("dims2", a((2, 3, 4)), a((3, 4, 5)), 2)
    yield g.sample("lists", a((3, 2, 4)), a((2, 3, 5)), ([1, 0], [0, 1]))
    yield g.sample("dims0", a((2,)), a((3,)), 0)


_MM_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
              "float64")
CASES += [
    Case("mm", torch.mm, lambda g: iter([g.sample("prime", g.arr((7, 13)), g.arr((13, 5))),
                                         g.sample("T", g.arr((5, 6), layout="T"),
                                                  g.arr((6, 3)))]),
         dtypes=_MM_DTYPES, tol=ORDER),
    Case("bmm", torch.bmm, lambda g: iter([g.sample("batched", g.arr((3, 4, 5)),
                                                    g.arr((3, 5, 2)))]),
         dtypes=_MM_DTYPES, tol=ORDER),
    Case("dot", torch.dot, _dot_samples, dtypes=_MM_DTYPES, tol=ORDER),
    Case("dot", torch.vdot, _dot_samples, name="vdot", dtypes=_MM_DTYPES, tol=ORDER),
    Case("mv", torch.mv, _mv_samples, dtypes=_MM_DTYPES, tol=ORDER),
    Case("outer", torch.outer, _outer_samples),
    Case("addmm", torch.addmm, _addmm_samples, dtypes="floating", tol=ORDER,
         inplace="addmm_"),
    Case("baddbmm", torch.baddbmm, _baddbmm_samples, dtypes="floating", tol=ORDER),
    Case("addmv", torch.addmv, _addmv_samples, dtypes="floating", tol=ORDER),
    Case("einsum", torch.einsum, _einsum_samples, dtypes="floating", tol=ORDER),
    Case("tensordot", torch.tensordot, _tensordot_samples, dtypes="floating", tol=ORDER),
]


# -- shape ops ---------------------------------------------------------------------------------------

def _flip_samples(g):
    a = g.arr
    yield g.sample("dims02", a((3, 4, 5)), (0, 2))
    yield g.sample("last", a((4, 6)), (-1,))
    yield g.sample("0d", a(()), (0,))
    yield g.sample("T", a((5, 7), layout="T"), (0, 1))
    yield g.sample("empty", a((0, 3)), (0,))
    yield g.sample("repeated", a((3, 4)), (0, 0)).raises(RuntimeError)


def _roll_samples(g):
    a = g.arr
    yield g.sample("flat", a((3, 4)), 5)
    yield g.sample("dims", a((3, 4, 5)), (1, -7), (0, 2))
    yield g.sample("T", a((5, 7), layout="T"), 2, 1)
    yield g.sample("misaligned", a((3, 4)), 1, (0, 1)).raises(RuntimeError)


def _repeat_samples(g, tile=False):
    a = g.arr
    yield g.sample("2d", a((2, 3)), (2, 3))
    yield g.sample("new-dims", a((3,)), (2, 1, 2))
    yield g.sample("0d", a(()), (3,))
    yield g.sample("T", a((4, 3), layout="T"), (2, 2))
    if tile:            # tile pads the repeats with leading ones; repeat refuses
        yield g.sample("few", a((2, 3)), (2,))
    else:
        yield g.sample("too-few", a((2, 3)), (2,)).raises(RuntimeError)


def _interleave_samples(g):
    a = g.arr
    yield g.sample("flat", a((2, 3)), 2)
    yield g.sample("dim1", a((2, 3)), 3, 1)
    yield g.sample("tensor-repeats", a((3, 2)), g.index((3,), 4), 0)
    yield g.sample("T", a((4, 3), layout="T"), 2, 0)


def _tri_samples(g):
    a = g.arr
    for k in (0, 1, -2):
        yield g.sample(f"k{k}", a((4, 5)), k)
    yield g.sample("batched", a((2, 3, 4)), 1)
    yield g.sample("T", a((5, 4), layout="T"))
    yield g.sample("1d", a((4,))).raises(RuntimeError)


def _diag_samples(g):
    a = g.arr
    yield g.sample("vector", a((4,)))
    yield g.sample("vector-offset", a((3,)), 2)
    yield g.sample("matrix", a((4, 5)), -1)
    yield g.sample("T", a((5, 4), layout="T"), 1)
    yield g.sample("3d", a((2, 3, 4))).raises(RuntimeError)


def _stack_samples(g):
    a = g.arr
    yield g.sample("vectors", [a((3,)), a((3,))])
    yield g.sample("matrices", [a((2, 3)), a((2, 3), layout="T")])
    yield g.sample("0d", [a(()), a(())])


def _split_samples(g):
    a = g.arr
    yield g.sample("sections", a((7, 3)), 3)
    yield g.sample("indices", a((3, 7)), [1, 5], 1)
    yield g.sample("T", a((6, 4), layout="T"), 2)


def _bcast_samples(g):
    a = g.arr
    yield g.sample("two", a((3, 1)), a((4,)))
    yield g.sample("three", a(()), a((2, 1, 3)), a((1, 3)))
    yield g.sample("mismatch", a((2,)), a((3,))).raises(RuntimeError)


CASES += [
    Case("flip", torch.flip, _flip_samples),
    Case("roll", torch.roll, _roll_samples),
    Case("repeat", lambda x, sizes: x.repeat(*sizes), _repeat_samples),
    Case("repeat", torch.tile, lambda g: _repeat_samples(g, tile=True), name="tile"),
    Case("repeat_interleave", torch.repeat_interleave, _interleave_samples),
    Case("tril", torch.tril, _tri_samples, inplace="tril_"),
    Case("triu", torch.triu, _tri_samples, inplace="triu_"),
    Case("diag", torch.diag, _diag_samples),
    Case("diag_embed", torch.diag_embed, lambda g: iter([g.sample("2d", g.arr((2, 3))),
                                                         g.sample("offset", g.arr((3,)), 1)])),
    Case("hstack", torch.hstack, _stack_samples),
    Case("vstack", torch.vstack, _stack_samples),
    Case("dstack", torch.dstack, _stack_samples),
    Case("column_stack", torch.column_stack, _stack_samples),
    Case("tensor_split", torch.tensor_split, _split_samples),
    Case("broadcast_tensors", torch.broadcast_tensors, _bcast_samples),
    Case("meshgrid", lambda *xs: torch.meshgrid(*xs, indexing="xy"),
         lambda g: iter([g.sample("three", g.arr((2,)), g.arr((3,)), g.arr(()))])),
]


# -- indexing composites and counting ---------------------------------------------------------------

def _index_select_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((5, 4)), 0, i((6,), 5))
    yield g.sample("dim1", a((3, 6)), -1, i((4,), 6))
    yield g.sample("T", a((5, 4), layout="T"), 1, i((3,), 4))
    yield g.sample("empty", a((5, 4)), 0, i((0,), 5))
    yield g.sample("out-of-range", a((3, 4)), 0, g.host([3], dtype="int64", grad=False)) \
        .raises(IndexError)


def _index_add_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((5, 4)), 0, i((6,), 5), a((6, 4)))
    yield g.sample("alpha", a((3, 6)), 1, i((4,), 6), a((3, 4)), alpha=2)
    yield g.sample("T", a((5, 4), layout="T"), 0, i((3,), 5), a((3, 4)))


def _index_fill_samples(g):
    v = True if g.is_bool else 2
    yield g.sample("dim1", g.arr((3, 5)), 1, g.index((2,), 5), v)
    yield g.sample("T", g.arr((4, 5), layout="T"), 0, g.index((2,), 4), v)


def _masked_samples(g, value=True):
    v = True if g.is_bool else 3
    yield g.sample("same", g.arr((3, 4)), g.mask((3, 4)), *([v] if value else []))
    yield g.sample("bcast-mask", g.arr((3, 4)), g.mask((4,)), *([v] if value else []))
    yield g.sample("T", g.arr((4, 5), layout="T"), g.mask((4, 5)), *([v] if value else []))


def _masked_scatter_samples(g):
    yield g.sample("same", g.arr((3, 4)), g.mask((3, 4)), g.arr((12,)))
    yield g.sample("bcast-mask", g.arr((3, 4)), g.mask((4,)), g.arr((3, 5)))


def _take_samples(g):
    yield g.sample("flat", g.arr((3, 4)), g.index((2, 3), 12))
    yield g.sample("negative", g.arr((3, 4)), g.index((5,), 0, low=-12))
    yield g.sample("T", g.arr((4, 5), layout="T"), g.index((6,), 20))
    yield g.sample("out-of-range", g.arr((3, 4)), g.host([12], dtype="int64", grad=False)) \
        .raises(IndexError)


def _take_along_samples(g):
    yield g.sample("dim1", g.arr((3, 4)), g.index((3, 2), 4), 1)
    yield g.sample("bcast", g.arr((3, 4)), g.index((1, 2), 4), 1)
    yield g.sample("flat", g.arr((3, 4)), g.index((5,), 12))


def _scatter_reduce_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((4, 5)), 0, i((6, 5), 4), a((6, 5)))
    yield g.sample("dim1", a((4, 5)), 1, i((4, 3), 5), a((4, 3)))


def _searchsorted_samples(g):
    seq = Arr(np.sort(g.values((9,))))
    yield g.sample("1d", seq, g.arr((3, 4)))
    yield g.sample("right", seq, g.arr((5,)), right=True)
    rows = Arr(np.sort(g.values((2, 6)), axis=-1))
    yield g.sample("batched", rows, g.arr((2, 3)))
    yield g.sample("0d", seq, g.arr(()))
    yield g.sample("mismatch", rows, g.arr((3, 3))).raises(RuntimeError)


def _unique_samples(g):
    small = Arr(g.rng.integers(0, 4, (4, 5)).astype(g.np))
    yield g.sample("flat", small)
    yield g.sample("inverse-counts", small, return_inverse=True, return_counts=True)
    yield g.sample("dim0", Arr(g.rng.integers(0, 2, (6, 2)).astype(g.np)), dim=0)
    yield g.sample("empty", g.arr((0,)))


def _bincount_samples(g):
    x = Arr(g.rng.integers(0, 6, (10,)).astype(np.int64), grad=False)
    yield g.sample("weights", x, g.arr((10,)))
    yield g.sample("minlength", x, g.arr((10,)), minlength=9)


CASES += [
    Case("index_select", torch.index_select, _index_select_samples),
    Case("index_add", torch.index_add, _index_add_samples, inplace="index_add_"),
    Case("index_fill", torch.index_fill, _index_fill_samples, inplace="index_fill_"),
    Case("masked_fill", torch.masked_fill, _masked_samples, inplace="masked_fill_"),
    Case("masked_select", torch.masked_select, lambda g: _masked_samples(g, False)),
    Case("masked_scatter", torch.masked_scatter, _masked_scatter_samples,
         inplace="masked_scatter_"),
    Case("take", torch.take, _take_samples),
    Case("take_along_dim", torch.take_along_dim, _take_along_samples),
    Case("argwhere", torch.argwhere, lambda g: iter([g.sample("2d", g.arr((3, 4))),
                                                     g.sample("T", g.arr((4, 3), layout="T"))])),
    Case("searchsorted", torch.searchsorted, _searchsorted_samples, dtypes="numeric"),
    Case("unique", torch.unique, _unique_samples),
    Case("unique_consecutive", torch.unique_consecutive, _unique_samples),
    Case("bincount", torch.bincount, _bincount_samples, dtypes="floating"),
]
for _r in ("sum", "prod", "mean", "amax", "amin"):
    CASES.append(Case("scatter_reduce",
                      lambda x, d, i, s, r=_r: torch.scatter_reduce(x, d, i, s, r),
                      _scatter_reduce_samples, name=f"scatter_reduce_{_r}",
                      dtypes="numeric" if _r == "mean" else "all",
                      grad=_r in ("sum", "mean")))


# -- factories: made on the backend's device (the random ones from a fixed seed, so every
# backend gets the same numbers) ----------------------------------------------------------------

def _like(g):
    yield g.sample("shape", g.arr((3, 4), grad=False))
    yield g.sample("0d", g.arr((), grad=False))
    yield g.sample("empty", g.arr((0, 2), grad=False))


_F = dict(samples=_like, grad=False)
CASES += [
    Case("zeros", lambda x: torch.zeros(x.shape, dtype=x.dtype, device=x.device), **_F),
    Case("ones", lambda x: torch.ones(x.shape, dtype=x.dtype, device=x.device), **_F),
    Case("full", lambda x: torch.full(x.shape, 1 if x.dtype is not torch.bool else True,
                                      dtype=x.dtype, device=x.device), **_F),
    # empty's values are undefined: its shape, dtype and device are what is compared
    Case("empty", lambda x: torch.zeros_like(torch.empty(x.shape, dtype=x.dtype, device=x.device)),
         **_F),
    Case("arange", lambda x: torch.arange(-3, 2.5, 0.5, dtype=x.dtype, device=x.device),
         samples=_like, grad=False, dtypes="floating"),
    Case("arange", lambda x: torch.arange(1, 9, 2, dtype=x.dtype, device=x.device),
         samples=_like, grad=False, dtypes="numeric", name="arange_int"),
    Case("linspace", lambda x: torch.linspace(-2, 3, 7, dtype=x.dtype, device=x.device),
         samples=_like, grad=False, dtypes="floating"),
    Case("logspace", lambda x: torch.logspace(-1, 2, 4, dtype=x.dtype, device=x.device),
         samples=_like, grad=False, dtypes="floating"),
    Case("eye", lambda x: torch.eye(3, 4, dtype=x.dtype, device=x.device), **_F),
    Case("tril_indices", lambda x: torch.tril_indices(3, 4, 1, device=x.device), **_F,
         dtypes=("int64",)),
    Case("triu_indices", lambda x: torch.triu_indices(4, 3, -1, device=x.device), **_F,
         dtypes=("int64",)),
    # random factories: the values come from dispatchtorch's host generator, identical on
    # every backend but not PyTorch's; the cases compare shape, dtype and device (result * 0)
    Case("rand", lambda x: torch.rand(x.shape, dtype=x.dtype, device=x.device) * 0,
         samples=_like, grad=False, dtypes="floating"),
    Case("randn", lambda x: torch.randn(x.shape, dtype=x.dtype, device=x.device) * 0,
         samples=_like, grad=False, dtypes="floating"),
    Case("randint", lambda x: torch.randint(0, 5, x.shape, dtype=x.dtype, device=x.device) * 0,
         samples=_like, grad=False, dtypes="integer"),
    Case("randperm", lambda x: torch.randperm(7, device=x.device) * 0, **_F, dtypes=("int64",)),
    Case("normal", lambda x: torch.normal(x, 2.0) * 0, samples=_like, grad=False,
         dtypes="floating"),
    Case("bernoulli", lambda x: torch.bernoulli(torch.full_like(x, 0.3)) * 0, samples=_like,
         grad=False, dtypes="floating"),
    Case("multinomial", lambda x: torch.multinomial(torch.ones(2, 5, device=x.device), 3) * 0,
         **_F, dtypes=("float32",)),
    Case("uniform_", lambda x: torch.empty_like(x).uniform_(-1, 2) * 0, samples=_like,
         grad=False, dtypes="floating"),
    Case("normal_", lambda x: torch.empty_like(x).normal_(1, 3) * 0, samples=_like,
         grad=False, dtypes="floating"),
]

# these public functions already have cases under the prims they call (named after the
# function); the cases here check them under their own rows
_TAKEN = {"all", "any", "bmm", "index_select", "masked_fill", "max", "mean", "min", "mm",
          "remainder", "take", "scatter_reduce_amax", "scatter_reduce_amin",
          "scatter_reduce_mean", "scatter_reduce_prod"}
for _c in CASES:
    if _c.name in _TAKEN:
        _c.name += "_row"
