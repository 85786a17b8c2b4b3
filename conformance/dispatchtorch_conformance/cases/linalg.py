"""Linear algebra: matmul in all of PyTorch's rank combinations (the frontend reduces
each to the batched prim), mm and bmm."""
import dispatchtorch as torch

from .. import samples as S
from ..case import Case, Tol

K_ORDER = Tol("backends block the K-sum differently (tiles, split-K); each output adds "
              "up to 1021 products", float32=(1e-5, 1e-5), float64=(1e-7, 1e-7))


# (M, K, N) around the tile sizes GPUs use (4, 16, 32, 64, 128): one past and one short
# of each edge, in each position, so a kernel that drops or repeats a partial tile fails
TILES = ((17, 33, 65), (129, 17, 3), (1, 129, 5), (63, 65, 31), (16, 15, 127), (4, 127, 129),
         (33, 1, 17), (5, 3, 1), (65, 63, 16))


def _tile_samples(g):
    for m, k, n in TILES:
        yield g.sample(f"tiles-{m}x{k}x{n}", g.arr((m, k), -1, 1), g.arr((k, n), -1, 1)) \
            .skip_checks("grad")


def _matmul_samples(g):
    yield from _tile_samples(g)
    a = g.arr
    yield g.sample("1d-1d", a((7,)), a((7,)))
    yield g.sample("2d-1d", a((5, 7)), a((7,)))
    yield g.sample("1d-2d", a((7,)), a((7, 3)))
    yield g.sample("prime", a((7, 13)), a((13, 5)))
    yield g.sample("one", a((1, 1)), a((1, 1)))
    yield g.sample("batched", a((2, 3, 4)), a((2, 4, 5)))
    yield g.sample("bcast-batch", a((2, 1, 3, 4)), a((5, 4, 2)))
    yield g.sample("batch-2d", a((3, 4, 5)), a((5, 2)))
    yield g.sample("T", a((5, 6), layout="T"), a((6, 3), layout="T"))
    yield g.sample("step-offset", a((4, 6), layout="step"), a((6, 3), layout="offset"))
    yield g.sample("expand", a((3, 4, 5), layout="expand"), a((5, 2)))
    yield g.sample("empty-k", a((3, 0)), a((0, 4)))
    yield g.sample("empty-m", a((0, 4)), a((4, 3)))
    yield g.sample("large", g.arr(S.LARGE, 0, 1), g.arr((S.LARGE[1], 3), 0, 1)) \
        .skip_checks(*S.NO_LARGE)
    yield g.sample("mismatch", a((3, 4)), a((5, 2))).raises(RuntimeError)
    yield g.sample("0d", a(()), a((3,))).raises(RuntimeError)
    other = S.PROMOTE_PARTNER[g.dtype]
    yield g.sample(f"dtypes-{other}", a((2, 3)), a((3, 2), dtype=other)).raises(RuntimeError)


def _mm_samples(g):
    a = g.arr
    yield g.sample("tiles-33x65x17", a((33, 65), -1, 1), a((65, 17), -1, 1)).skip_checks("grad")
    yield g.sample("prime", a((7, 13)), a((13, 5)))
    yield g.sample("T", a((5, 6), layout="T"), a((6, 3)))
    yield g.sample("empty", a((0, 4)), a((4, 3)))
    yield g.sample("3d", a((2, 3, 4)), a((4, 5))).raises(RuntimeError)


def _bmm_samples(g):
    a = g.arr
    yield g.sample("tiles-2x17x33x65", a((2, 17, 33), -1, 1), a((2, 33, 65), -1, 1)) \
        .skip_checks("grad")
    yield g.sample("perm", a((3, 5, 4), layout="perm"), a((3, 4, 2), layout="perm"))
    yield g.sample("batched", a((3, 4, 5)), a((3, 5, 2)))
    yield g.sample("step", a((2, 3, 4), layout="step"), a((2, 4, 5), layout="T"))
    yield g.sample("batch-mismatch", a((2, 3, 4)), a((3, 4, 5))).raises(RuntimeError)


CASES = [
    Case("matmul", torch.matmul, _matmul_samples, tol=K_ORDER),
    Case("matmul", torch.mm, _mm_samples, name="mm", dtypes="numeric", tol=K_ORDER),
    Case("matmul", torch.bmm, _bmm_samples, name="bmm", dtypes="numeric", tol=K_ORDER),
]
