"""Indexing: gather, the scatter family (one prim, several reductions), index_put,
nonzero and the public functions built on them (index_select, take, advanced
__getitem__ / __setitem__, masked_fill)."""
import numpy as np

import dispatchtorch as torch

from .. import samples as S
from ..case import Arr, Case


def unique_index(g, shape, dim, size):
    """An int64 index of `shape` whose entries along `dim` are distinct values in
    [0, size): scatter without reduction is then free of write races."""
    full = list(shape)
    full[dim] = size
    perm = np.argsort(g.rng.random(full), axis=dim)
    return Arr(np.take(perm, np.arange(shape[dim]), axis=dim).astype(np.int64), grad=False)


def _gather_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((4, 5)), 0, i((3, 5), 4))
    yield g.sample("dim1", a((4, 5)), 1, i((4, 2), 5))
    yield g.sample("small-index", a((4, 5)), -1, i((2, 3), 5))
    yield g.sample("negative-index", a((4, 5)), 0, i((3, 5), 4, low=-4))
    yield g.sample("0d", a(()), 0, i((), 1))
    yield g.sample("empty-index", a((4, 5)), 0, i((0, 5), 4))
    yield g.sample("T", a((5, 6), layout="T"), 1, i((5, 3), 6, layout="T"))
    yield g.sample("step", a((4, 9), layout="step"), 0, i((2, 9), 4))
    yield g.sample("large", a(S.LARGE), 1, i((S.LARGE[0], 5), S.LARGE[1])) \
        .skip_checks(*S.NO_LARGE)
    yield g.sample("out-of-range", a((3, 4)), 0, g.host([[3]], dtype="int64", grad=False)) \
        .raises(RuntimeError)


def _scatter_samples(g):
    a = g.arr
    yield g.sample("dim0", a((4, 5)), 0, unique_index(g, (3, 5), 0, 4), a((3, 5)))
    yield g.sample("dim1-wide-src", a((4, 5)), 1, unique_index(g, (4, 2), 1, 5), a((4, 3)))
    yield g.sample("small-index", a((4, 5)), 1, unique_index(g, (2, 3), 1, 5), a((3, 4)))
    yield g.sample("0d", a(()), 0, g.index((), 1), a(()))
    yield g.sample("empty", a((4, 5)), 0, g.index((0, 5), 4), a((0, 5)))
    yield g.sample("T", a((5, 6), layout="T"), 1, unique_index(g, (5, 2), 1, 6),
                   a((5, 2), layout="step"))
    yield g.sample("large", a(S.LARGE), 1, unique_index(g, (S.LARGE[0], 3), 1, S.LARGE[1]),
                   a((S.LARGE[0], 3))).skip_checks(*S.NO_LARGE)
    yield g.sample("out-of-range", a((3, 4)), 0, g.host([[5]], dtype="int64", grad=False),
                   a((1, 1))).raises(RuntimeError)


def _scatter_value_samples(g):
    v = 2 if not g.is_bool else True
    yield g.sample("value-dim0", g.arr((4, 5)), 0, unique_index(g, (3, 5), 0, 4), v)
    yield g.sample("value-step", g.arr((3, 8), layout="step"), 1, unique_index(g, (3, 2), 1, 8), v)


def _scatter_add_samples(g):
    """Random indices, so several sources add into one element."""
    a, i = g.arr, g.index
    yield g.sample("dim0", a((4, 5)), 0, i((6, 5), 4), a((6, 5)))
    yield g.sample("dim1", a((4, 5)), -1, i((4, 7), 5), a((4, 8)))
    yield g.sample("small-index", a((4, 5)), 0, i((3, 2), 4), a((3, 4)))
    yield g.sample("0d", a(()), 0, i((), 1), a(()))
    yield g.sample("empty", a((4, 5)), 0, i((0, 5), 4), a((0, 5)))
    yield g.sample("T", a((5, 6), layout="T"), 0, i((7, 6), 5), a((7, 6), layout="T"))
    yield g.sample("large", a((3, S.LARGE[1])), 0, i(S.LARGE, 3), a(S.LARGE)) \
        .skip_checks(*S.NO_LARGE)


def _index_add_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((5, 4)), 0, i((6,), 5), a((6, 4)))
    yield g.sample("dim1-alpha", a((3, 6)), 1, i((4,), 6), a((3, 4)), alpha=2)
    yield g.sample("step", a((5, 4), layout="step"), 0, i((3,), 5), a((3, 4)))
    yield g.sample("empty", a((5, 4)), 0, i((0,), 5), a((0, 4)))


def _scatter_reduce(reduce, include_self=True):
    def fn(x, dim, index, src):
        return torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)
    return fn


def _index_put_samples(g):
    a, i = g.arr, g.index
    yield g.sample("rows", a((5, 4)), (unique_index(g, (3,), 0, 5),), a((3, 4)))
    yield g.sample("accumulate", a((5, 4)), (i((7,), 5),), a((7, 4)), True)
    cells = g.rng.permutation(20)[:6]           # six distinct (row, col) pairs of a 5x4
    yield g.sample("pairs", a((5, 4)), (Arr(cells // 4, grad=False), Arr(cells % 4, grad=False)),
                   a((6,)))
    yield g.sample("mask", a((3, 4)), (g.mask((3, 4)),), a(()))
    yield g.sample("broadcast-value", a((5, 4)), (unique_index(g, (2,), 0, 5),), a((4,)))
    yield g.sample("T", a((4, 6), layout="T"), (unique_index(g, (3,), 0, 4),), a((3, 6)))
    yield g.sample("value-shape", a((4, 6)), (unique_index(g, (2,), 0, 4),), a((2, 5))) \
        .raises(RuntimeError)
    yield g.sample("out-of-range", a((3, 4)), (g.host([7], dtype="int64", grad=False),),
                   a((4,))).raises(IndexError)


def _setitem(x, key, value):
    x[key] = value
    return x


def _setitem_samples(g):
    a, i = g.arr, g.index
    v = 1 if not g.is_bool else False
    yield g.sample("slice-scalar", a((5, 6)), (slice(1, 4), slice(None, None, 2)), v)
    yield g.sample("slice-tensor", a((5, 6)), (Ellipsis, 2), a((5,)))
    yield g.sample("index", a((5, 6)), (unique_index(g, (3,), 0, 5),), a((3, 6)))
    yield g.sample("mask", a((4, 5)), (g.mask((4, 5)),), v)
    yield g.sample("step-view", a((4, 6), layout="step"), (slice(None), 1), a(()))
    yield g.sample("T-index", a((4, 6), layout="T"), (slice(None), unique_index(g, (2,), 0, 4)),
                   v)


def _nonzero_values(g, shape, layout="contig", p=0.5):
    v = g.values(shape)
    if not g.is_bool:
        v[g.rng.random(shape) < p] = 0
    return Arr(v, layout)


def _nonzero_samples(g):
    yield g.sample("0d-zero", Arr(np.zeros((), g.np)))
    yield g.sample("0d-one", Arr(np.ones((), g.np)))
    yield g.sample("empty", _nonzero_values(g, (0, 3)))
    yield g.sample("3d", _nonzero_values(g, (3, 4, 5)))
    yield g.sample("T", _nonzero_values(g, (5, 7), "T"))
    yield g.sample("step", _nonzero_values(g, (4, 9), "step"))
    yield g.sample("large", _nonzero_values(g, S.LARGE, p=0.99)).skip_checks(*S.NO_LARGE)
    yield g.sample("extremes", g.special())


def _select_samples(g):
    a, i = g.arr, g.index
    yield g.sample("dim0", a((5, 6)), 0, i((4,), 5))
    yield g.sample("dim1", a((5, 6)), -1, i((8,), 6))
    yield g.sample("empty", a((5, 6)), 0, i((0,), 5))
    yield g.sample("T", a((5, 6), layout="T"), 1, i((3,), 6))
    yield g.sample("out-of-range", a((5, 6)), 0, g.host([5], dtype="int64", grad=False)) \
        .raises(IndexError)


def _getitem_adv_samples(g):
    a, i = g.arr, g.index
    yield g.sample("tensor", a((5, 6)), i((3,), 5))
    yield g.sample("list", a((5, 6)), [0, 2, -1])
    yield g.sample("mask", a((4, 5)), g.mask((4, 5)))
    yield g.sample("inner", a((3, 5, 4)), (slice(None), i((2, 2), 5)))
    yield g.sample("pair", a((5, 6)), (i((4,), 5), i((4,), 6)))
    yield g.sample("split-pair", a((3, 4, 5)), (i((2,), 3), slice(None), i((2,), 5)))
    yield g.sample("T", a((5, 6), layout="T"), (slice(1, None), i((3,), 6)))


def _masked_fill_samples(g):
    a = g.arr
    v = 2 if not g.is_bool else True
    yield g.sample("same", a((4, 5)), g.mask((4, 5)), v)
    yield g.sample("bcast", a((4, 5)), g.mask((5,)), v)
    yield g.sample("0d-value", a((3, 4)), g.mask((3, 4)), a(()))
    yield g.sample("T", a((5, 6), layout="T"), g.mask((5, 6), layout="step"), v)
    yield g.sample("not-bool", a((3,)), a((3,)), v).raises(RuntimeError) if not g.is_bool \
        else g.sample("empty", a((0, 2)), g.mask((0, 2)), v)


CASES = [
    Case("gather", torch.gather, _gather_samples),
    Case("gather", torch.index_select, _select_samples, name="index_select"),
    Case("gather", lambda x, i: torch.take(x, i), lambda g: [
        g.sample("flat", g.arr((4, 5)), g.index((2, 3), 20)),
        g.sample("T", g.arr((4, 5), layout="T"), g.index((6,), 20, low=-20))], name="take"),
    Case("gather", lambda x, key: x[key], _getitem_adv_samples, name="getitem_advanced"),
    Case("scatter", torch.scatter, S.plus(_scatter_samples, _scatter_value_samples)),
    Case("scatter_add", torch.scatter_add, _scatter_add_samples),
    Case("scatter_add", _scatter_reduce("mean"), _scatter_add_samples, name="scatter_reduce_mean",
         grad=False),
    Case("scatter_", lambda x, d, i, s, **kw: x.index_add_(d, i, s, **kw), _index_add_samples,
         name="index_add_", grad=False),
    Case("scatter_", _scatter_reduce("prod"), _scatter_add_samples, name="scatter_reduce_prod",
         grad=False),
    Case("scatter_", _scatter_reduce("amax"), _scatter_add_samples, name="scatter_reduce_amax",
         grad=False),
    Case("scatter_", _scatter_reduce("amin", include_self=False), _scatter_add_samples,
         name="scatter_reduce_amin", grad=False),
    Case("index_put", lambda x, idx, v, acc=False: x.index_put(idx, v, acc), _index_put_samples,
         inplace=lambda x, idx, v, acc=False: x.index_put_(idx, v, acc)),
    Case("index_put", _setitem, _setitem_samples, name="setitem", grad=False),
    Case("nonzero", torch.nonzero, _nonzero_samples),
    Case("nonzero", lambda x: torch.nonzero(x, as_tuple=True), _nonzero_samples,
         name="nonzero_tuple"),
    Case("where", torch.masked_fill, _masked_fill_samples, name="masked_fill",
         inplace="masked_fill_"),
]
