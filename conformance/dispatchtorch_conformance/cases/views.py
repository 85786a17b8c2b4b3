"""Views: view/reshape, permute/transpose, expand, the slicing family and as_strided.
Each declares alias=True where the result shares its input's memory: writing
through it must change the input on the backend as it does on the CPU."""
import dispatchtorch as torch

from .. import samples as S
from ..case import Case


def _view_samples(g):
    a = g.arr
    x = a((3, 4, 5))
    yield g.sample("merge", x, (12, 5))
    yield g.sample("flat", x, (-1,))
    yield g.sample("infer", x, (3, -1))
    yield g.sample("0d", a(()), (1,))
    yield g.sample("to-0d", a((1,)), ())
    yield g.sample("empty", a((0, 3)), (3, 0))
    yield g.sample("prime", a((7, 13)), (13, 7))
    yield g.sample("step-split", a((4, 6), layout="step"), (4, 3, 2))
    yield g.sample("offset", a((4, 5), layout="offset"), (20,))
    yield g.sample("large", a(S.LARGE), (-1,)).skip_checks(*S.NO_LARGE)
    yield g.sample("T-flat", a((5, 7), layout="T"), (-1,)).raises(RuntimeError)
    yield g.sample("bad-size", x, (7, 9)).raises(RuntimeError)


def _reshape_samples(g):
    a = g.arr
    yield g.sample("T-flat", a((5, 7), layout="T"), (-1,))
    yield g.sample("step", a((4, 6), layout="step"), (6, 4))
    yield g.sample("contig", a((3, 4, 5)), (5, -1))
    yield g.sample("empty", a((2, 0)), (0, 5))


def _permute_samples(g):
    a = g.arr
    x = a((3, 4, 5))
    yield g.sample("201", x, (2, 0, 1))
    yield g.sample("negative", x, (-1, 0, 1))
    yield g.sample("0d", a(()), ())
    yield g.sample("1d", a((6,)), (0,))
    yield g.sample("T", a((5, 7), layout="T"), (1, 0))
    yield g.sample("step", a((2, 3, 4), layout="step"), (2, 1, 0))
    yield g.sample("empty", a((0, 2, 3)), (1, 2, 0))
    yield g.sample("large", a(S.LARGE), (1, 0)).skip_checks(*S.NO_LARGE)
    yield g.sample("duplicate", x, (0, 0, 1)).raises(RuntimeError)


def _transpose_samples(g):
    a = g.arr
    yield g.sample("first-last", a((3, 4, 5)), 0, -1)
    yield g.sample("T", a((5, 7), layout="T"), 0, 1)
    yield g.sample("0d", a(()), 0, -1)
    yield g.sample("out-of-range", a((3, 4)), 0, 2).raises(IndexError)


def _expand_samples(g):
    a = g.arr
    yield g.sample("col", a((3, 1)), (3, 4))
    yield g.sample("lead", a((4, 1, 5)), (2, 4, 3, 5))
    yield g.sample("minus1", a((3, 1)), (-1, 6))
    yield g.sample("0d", a(()), (2, 3))
    yield g.sample("same", a((2, 3)), (2, 3))
    yield g.sample("empty", a((0, 1)), (0, 4))
    yield g.sample("step", a((4, 1), layout="step"), (4, 5))
    yield g.sample("large", a((1, S.LARGE[1])), S.LARGE).skip_checks(*S.NO_LARGE)
    yield g.sample("non-singleton", a((3, 2)), (3, 4)).raises(RuntimeError)


def _getitem_samples(g):
    a = g.arr
    x = a((5, 6, 7))
    yield g.sample("slices", x, (slice(1, 4), slice(None, None, 2)))
    yield g.sample("ellipsis-int", x, (Ellipsis, 3))
    yield g.sample("none-step", x, (None, 2, slice(None, None, 3)))
    yield g.sample("negative", x, (-1,))
    yield g.sample("0d", a(()), ())
    yield g.sample("empty-slice", x, (slice(10, 20),))
    yield g.sample("T", a((6, 8), layout="T"), (slice(1, None, 3), slice(2, 5)))
    yield g.sample("step", a((4, 9), layout="step"), (slice(None), slice(1, None, 2)))
    yield g.sample("large", a(S.LARGE), (slice(1, None, 2), slice(None, -3))) \
        .skip_checks(*S.NO_LARGE)
    yield g.sample("out-of-range", x, (10,)).raises(IndexError)
    yield g.sample("zero-step", x, (slice(None, None, 0),)).raises(ValueError)


def _family(make):
    """One sample set for the functions that take x first (narrow, select, ...)."""
    def gen(g):
        yield from make(g, g.arr)
    return gen


CASES = [
    Case("view", lambda x, shape: x.view(shape), _view_samples, alias=True),
    Case("view", lambda x, shape: x.reshape(shape), _reshape_samples, name="reshape"),
    Case("view", torch.squeeze, _family(lambda g, a: [
        g.sample("all", a((1, 3, 1, 2))), g.sample("dim", a((3, 1, 2)), 1),
        g.sample("step", a((1, 4, 1), layout="step"))]), name="squeeze", alias=True),
    Case("view", torch.unsqueeze, _family(lambda g, a: [
        g.sample("front", a((3, 4)), 0), g.sample("back", a((3, 4)), -1),
        g.sample("0d", a(()), 0), g.sample("T", a((3, 5), layout="T"), 1)]),
        name="unsqueeze", alias=True),
    Case("view", torch.flatten, _family(lambda g, a: [
        g.sample("all", a((2, 3, 4))), g.sample("range", a((2, 3, 4, 5)), 1, 2),
        g.sample("0d", a(())), g.sample("T", a((4, 5), layout="T"))]), name="flatten"),
    Case("permute", lambda x, dims: x.permute(dims), _permute_samples, alias=True),
    Case("permute", torch.transpose, _transpose_samples, name="transpose", alias=True),
    Case("expand", lambda x, size: x.expand(size), _expand_samples, alias=True),
    Case("slice", lambda x, key: x[key], _getitem_samples, alias=True),
    Case("slice", torch.narrow, _family(lambda g, a: [
        g.sample("mid", a((5, 6)), -1, 2, 3), g.sample("empty", a((5, 6)), 0, 5, 0),
        g.sample("T", a((6, 4), layout="T"), 0, 1, 2),
        g.sample("too-long", a((5, 6)), 0, 3, 4).raises(RuntimeError)]),
        name="narrow", alias=True),
    Case("slice", torch.select, _family(lambda g, a: [
        g.sample("mid", a((5, 6, 2)), 1, -2), g.sample("1d", a((4,)), 0, 3),
        g.sample("step", a((3, 5), layout="step"), 1, 2),
        g.sample("out-of-range", a((3, 4)), 1, 4).raises(IndexError)]),
        name="select", alias=True),
    Case("slice", torch.diagonal, _family(lambda g, a: [
        g.sample("main", a((4, 5))), g.sample("above", a((4, 5)), 1),
        g.sample("below-3d", a((2, 4, 3)), -1, 1, 2), g.sample("T", a((5, 4), layout="T")),
        g.sample("same-dims", a((3, 3)), 0, 1, 1).raises(RuntimeError)]),
        name="diagonal", alias=True),
    Case("slice", lambda x, *a: x.unfold(*a), _family(lambda g, a: [
        g.sample("windows", a((3, 10)), 1, 4, 3), g.sample("1d", a((8,)), 0, 2, 2),
        g.sample("step", a((4, 7), layout="step"), 1, 3, 1)]), name="unfold", alias=True),
    Case("slice", torch.split, _family(lambda g, a: [
        g.sample("size", a((7, 3)), 3), g.sample("sizes", a((3, 7)), [2, 5], 1),
        g.sample("T", a((6, 4), layout="T"), 4, 0),
        g.sample("bad-sizes", a((3, 7)), [2, 2], 1).raises(RuntimeError)]),
        name="split", alias=True),
    Case("slice", torch.chunk, _family(lambda g, a: [
        g.sample("even", a((6, 2)), 3), g.sample("uneven", a((3, 7)), 3, -1)]),
        name="chunk", alias=True),
    Case("slice", torch.unbind, _family(lambda g, a: [
        g.sample("dim0", a((3, 4))), g.sample("dim1", a((2, 3, 2), layout="step"), 1)]),
        name="unbind", alias=True),
    Case("as_strided", lambda x, *a: x.as_strided(*a), _family(lambda g, a: [
        g.sample("window", a((4, 6)), (2, 3), (6, 2), 1),
        g.sample("overlap", a((10,)), (4, 3), (2, 1)),
        g.sample("empty", a((4, 6)), (0, 3), (3, 1)),
        g.sample("0d", a((5,)), (), (), 4),
        g.sample("T", a((4, 6), layout="T"), (3, 2), (1, 4)),
        g.sample("out-of-storage", a((2, 3)), (3, 3), (3, 1)).raises(RuntimeError)]),
        alias=True),
    Case("as_strided_scatter", lambda x, src, *a: torch.as_strided_scatter(x, src, *a), _family(lambda g, a: [
        g.sample("window", a((4, 6)), a((2, 3)), (2, 3), (6, 2), 1),
        g.sample("overlap", a((10,)), a((4, 3)), (4, 3), (2, 1), 0),
        g.sample("T", a((4, 6), layout="T"), a((3, 2), layout="step"), (3, 2), (1, 4), 0),
        g.sample("empty", a((4, 6)), a((0, 3)), (0, 3), (3, 1), 0),
        g.sample("src-shape", a((4, 6)), a((2, 2)), (2, 3), (6, 1), 0).raises(RuntimeError)])),
]
