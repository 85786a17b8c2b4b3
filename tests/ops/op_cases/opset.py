"""Sample cases of the rows added for PyTorch's wider op set (issue 15): the extra
elementwise ops, products, scatters, and the linear-algebra decompositions. The OpInfo
test (tests/opinfo) runs PyTorch's own samples of the same ops on top of these."""
import numpy as np

from op_harness import FLOATS, A, Case

CASES = []
F = ("float32", "float64")


def add(*cases):
    CASES.extend(cases)


# -- elementwise -----------------------------------------------------------------------------
add(Case("signbit", lambda T, x: T.signbit(x), (A((3, 4), "special"),), F + ("int64",),
         np.signbit, grad=False),
    Case("copysign", lambda T, a, b: T.copysign(a, b), (A((3, 4)), A((4,), "special")), F,
         np.copysign, fd=False),
    Case("copysign", lambda T, a, b: a.copysign(b), (A((3, 4), "nonzero"), A((3, 4))), F,
         np.copysign, name="method"),
    Case("heaviside", lambda T, x, v: T.heaviside(x, v), (A((3, 4), "int"), A((4,))), F,
         np.heaviside, grad=False),
    Case("sinc", lambda T, x: T.sinc(x), (A((3, 4), "int"),), F, np.sinc, fd=False),
    Case("sinc", lambda T, x: x.sinc(), (A((5,)),), F, np.sinc, name="method"),
    Case("deg2rad", lambda T, x: T.deg2rad(x), (A((3, 4)),), F, np.deg2rad),
    Case("rad2deg", lambda T, x: T.rad2deg(x), (A((3, 4)),), F, np.rad2deg),
    Case("logaddexp2", lambda T, a, b: T.logaddexp2(a, b), (A((3, 4)), A((4,))), F,
         np.logaddexp2),
    Case("angle", lambda T, x: T.angle(x), (A((3, 4), "special"),), F,  # -0.0: 0 as PyTorch
         lambda x: np.where(x < 0, np.pi, np.where(np.isnan(x), x, 0.0)), grad=False),
    Case("angle", lambda T, x: T.angle(x), (A((3, 4), "nonzero"),), F, np.angle, name="grad"),
    # PyTorch's gradient is 0 for negative integer exponents (its rule computes pow(2, other)
    # in integers); ours is 2**other, which finite differences confirm
    Case("ldexp", lambda T, x, e: T.ldexp(x, e), (A((3, 4)), A((4,), "int", "int64")), F,
         lambda x, e: np.ldexp(x, e.astype(np.int64)), torch_grad=False),
    Case("addcmul", lambda T, x, a, b: T.addcmul(x, a, b, value=0.5),
         (A((3, 4)), A((4,)), A((3, 1))), F, lambda x, a, b: x + 0.5 * a * b),
    Case("addcmul", lambda T, x, a, b: x.addcmul(a, b), (A((2, 3)), A((2, 3)), A((2, 3))),
         ("int64",), lambda x, a, b: x + a * b, name="int", grad=False),
    Case("addcdiv", lambda T, x, a, b: T.addcdiv(x, a, b, value=2),
         (A((3, 4)), A((4,)), A((3, 4), "nonzero")), F, lambda x, a, b: x + 2 * a / b),
    Case("isclose", lambda T, a, b: T.isclose(a, b, rtol=0.1, atol=0.5),
         (A((3, 4)), A((3, 4))), F, lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.5),
         grad=False),
    Case("isclose", lambda T, a, b: T.isclose(a, b, equal_nan=True),
         (A((3, 4), "special"), A((3, 4), "special")), F,
         lambda a, b: np.isclose(a, b, equal_nan=True), grad=False, name="special"))

# -- products -----------------------------------------------------------------------------------
add(Case("addr", lambda T, x, a, b: T.addr(x, a, b, beta=0.5, alpha=2), (A((3, 4)), A((3,)),
                                                                           A((4,))),
         F, lambda x, a, b: 0.5 * x + 2 * np.outer(a, b)),
    Case("addbmm", lambda T, x, a, b: T.addbmm(x, a, b), (A((2, 4)), A((3, 2, 5)), A((3, 5, 4))),
         F, lambda x, a, b: x + (a @ b).sum(0)),
    Case("inner", lambda T, a, b: T.inner(a, b), (A((2, 3)), A((4, 3))), F, np.inner),
    Case("kron", lambda T, a, b: T.kron(a, b), (A((2, 3)), A((3, 2, 2))), F, np.kron),
    Case("trace", lambda T, x: T.trace(x), (A((3, 4)),), F, np.trace),
    Case("cross", lambda T, a, b: T.linalg.cross(a, b), (A((4, 3)), A((1, 3))), F,
         lambda a, b: np.cross(a, b)),
    Case("cross", lambda T, a, b: T.cross(a, b, dim=0), (A((3, 2)), A((3, 2))), F,
         lambda a, b: np.cross(a, b, axis=0), name="dim0"),
    Case("cdist", lambda T, a, b: T.cdist(a, b), (A((4, 3)), A((5, 3))), F,
         lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))),
    Case("cdist", lambda T, a, b: T.cdist(a, b, p=1), (A((2, 4, 3)), A((2, 5, 3))), F,
         lambda a, b: np.abs(a[:, :, None] - b[:, None]).sum(-1), name="p1", fd=False),
    Case("block_diag", lambda T, a, b, c: T.block_diag(a, b, c), (A((2, 3)), A((4,)), A(())), F,
         lambda a, b, c: np.block([[a, np.zeros((2, 5))], [np.zeros((1, 3)), b[None],
                                                          np.zeros((1, 1))],
                                   [np.zeros((1, 7)), c.reshape(1, 1)]])))

# -- scatters -----------------------------------------------------------------------------------


def _diag_set(x, s):
    r = x.copy()
    np.fill_diagonal(r, s)
    return r


def _row_set(x, s, i):
    r = x.copy()
    r[:, i] = s
    return r


add(Case("diagonal_scatter", lambda T, x, s: T.diagonal_scatter(x, s), (A((3, 3)), A((3,))), F,
         _diag_set),
    Case("select_scatter", lambda T, x, s: T.select_scatter(x, s, 1, 2), (A((3, 4)), A((3,))), F,
         lambda x, s: _row_set(x, s, 2)),
    Case("slice_scatter", lambda T, x, s: T.slice_scatter(x, s, 1, 1, 4, 2),
         (A((3, 5)), A((3, 2))), F, lambda x, s: _row_set(x, s, slice(1, 4, 2))),
    Case("index_copy", lambda T, x, s: T.index_copy(x, 1, T.tensor([3, 0]), s),
         (A((3, 4)), A((3, 2))), F, lambda x, s: _row_set(x, s, [3, 0])),
    Case("put", lambda T, x, s: T.put(x, T.tensor([0, -1, 5]), s), (A((3, 4)), A((3,))), F,
         lambda x, s: _put(x, s)),
    Case("put", lambda T, x, s: x.put(T.tensor([0, 0, 5]), s, accumulate=True),
         (A((3, 4)), A((3,))), F, lambda x, s: _put(x, s, True), name="accumulate"))


def _put(x, s, acc=False):
    r = x.copy().reshape(-1)
    if acc:
        np.add.at(r, [0, 0, 5], s)
    else:
        r[[0, -1, 5]] = s
    return r.reshape(x.shape)


assert all(set(c.dtypes) <= set(FLOATS) | {"int64"} for c in CASES)
