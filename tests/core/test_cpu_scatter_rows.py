"""scatter_ with a reduction over whole rows (embedding's backward, index_add) takes
the CPU backend's sorted row path: bit for bit numpy's ufunc.at, in every layout."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch_cpu.kernels import KERNELS, _full_index

rng = np.random.default_rng(5)
UFUNCS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


@pytest.mark.parametrize("reduce", sorted(UFUNCS))
@pytest.mark.parametrize("dim,shape", [(0, (65, 64)), (1, (5, 30, 7)), (2, (3, 4, 50)),
                                       (0, (3, 300))])
def test_row_scatter_equals_ufunc_at(dim, shape, reduce):
    k = 3 * shape[dim]
    line = rng.integers(0, shape[dim], k)
    ishape = list(shape)
    ishape[dim] = k
    bshape = [1] * len(shape)
    bshape[dim] = k
    index = np.broadcast_to(line.reshape(bshape), ishape)       # whole rows: stride 0
    sshape = list(ishape)
    sshape[0 if dim else -1] += 2                                # src larger than index
    src = rng.standard_normal(sshape).astype(np.float32)
    out = rng.standard_normal(shape).astype(np.float32)
    want = out.copy()
    UFUNCS[reduce].at(want, _full_index(index, dim), src[tuple(slice(0, n) for n in ishape)])
    KERNELS["scatter_"](out, index, src, dim=dim, reduce=reduce)
    np.testing.assert_array_equal(out, want)


def test_embedding_backward_sums_rows_of_repeated_tokens():
    weight = torch.randn(10, 8, requires_grad=True)
    idx = np.array([[1, 3, 3, 9], [3, 1, 0, 3]])
    out = torch.nn.functional.embedding(torch.from_numpy(idx), weight)
    g = rng.standard_normal((2, 4, 8)).astype(np.float32)
    out.backward(torch.from_numpy(g))
    want = np.zeros((10, 8))
    for (i, j), t in np.ndenumerate(idx):
        want[t] += g[i, j]
    np.testing.assert_allclose(weight.grad.numpy(), want, rtol=1e-6, atol=1e-6)
