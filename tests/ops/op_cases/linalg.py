"""Sample cases of the linear algebra ops: every matmul case (1-d, 2-d, batched,
broadcast), mm, bmm, mv, dot, vdot, outer, addmm, addmv, baddbmm, einsum, tensordot."""
import numpy as np

from op_harness import FLOATS, INTS, NUMERIC, A, Case

CASES = []
MM_DTYPES = ("float32", "float64", "int64", "int32", "float16", "bfloat16")


def add(*cases):
    CASES.extend(cases)


_MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                  ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                  ((2, 1, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)),
                  ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1))]
for _sa, _sb in _MATMUL_SHAPES:
    add(Case("matmul", lambda T, a, b: T.matmul(a, b), (A(_sa), A(_sb)), MM_DTYPES, np.matmul,
             grad=0 not in _sa + _sb, gradgrad=len(_sa) + len(_sb) <= 4, name=f"{_sa}@{_sb}"))
add(Case("matmul", lambda T, a, b: a @ b, (A((2, 3)), A((3, 2))), MM_DTYPES, np.matmul,
         name="operator"),
    Case("matmul", lambda T, a, b: a.matmul(b), (A((2, 3)), A((4, 2))), FLOATS, grad=False,
         raises=RuntimeError, name="mismatch"),
    Case("matmul", lambda T, a, b: T.matmul(a, b), (A(()), A((3,))), FLOATS, grad=False,
         raises=RuntimeError, name="0-d"),
    Case("matmul", lambda T, a, b: T.matmul(a, b), (A((2, 3)), A((3, 2), dtype="float64")),
         ("float32",), grad=False, raises=RuntimeError, name="mixed dtypes"),
    Case("matmul", lambda T, a, b: T.matmul(a, b), (A((2, 3)), A((3, 2))), ("bool",), grad=False,
         name="bool"),
    Case("mm", lambda T, a, b: T.mm(a, b), (A((2, 3)), A((3, 4))), MM_DTYPES, np.matmul,
         gradgrad=True),
    Case("mm", lambda T, a, b: a.mm(b), (A((0, 3)), A((3, 4))), FLOATS, np.matmul, name="empty",
         grad=False),
    Case("mm", lambda T, a, b: T.mm(a, b), (A((2, 3)), A((3,))), FLOATS, grad=False,
         raises=RuntimeError, name="1-d"),
    Case("bmm", lambda T, a, b: T.bmm(a, b), (A((4, 2, 3)), A((4, 3, 2))), MM_DTYPES, np.matmul),
    Case("bmm", lambda T, a, b: a.bmm(b), (A((4, 2, 3)), A((1, 3, 2))), FLOATS, grad=False,
         raises=RuntimeError, name="batch mismatch"),
    Case("mv", lambda T, a, v: T.mv(a, v), (A((2, 3)), A((3,))), MM_DTYPES, np.matmul),
    Case("mv", lambda T, a, v: a.mv(v), (A((2, 3)), A((2,))), FLOATS, grad=False,
         raises=RuntimeError, name="mismatch"),
    Case("dot", lambda T, a, b: T.dot(a, b), (A((5,)), A((5,))), MM_DTYPES, np.dot, gradgrad=True),
    Case("dot", lambda T, a, b: a.dot(b), (A((0,)), A((0,))), FLOATS, np.dot, grad=False,
         name="empty"),
    Case("dot", lambda T, a, b: T.vdot(a, b), (A((5,)), A((5,))), MM_DTYPES, np.vdot, name="vdot"),
    Case("dot", lambda T, a, b: T.dot(a, b), (A((5,)), A((5,), dtype="float64")), ("float32",),
         grad=False, raises=RuntimeError, name="mixed dtypes"),
    Case("dot", lambda T, a, b: T.dot(a, b), (A((2, 3)), A((3,))), FLOATS, grad=False,
         raises=RuntimeError, name="2-d"),
    Case("outer", lambda T, a, b: T.outer(a, b), (A((3,)), A((4,))), NUMERIC + ("bool",),
         np.outer),
    Case("outer", lambda T, a, b: a.outer(b), (A((3,), dtype="int32"), A((4,))), FLOATS,
         np.outer, name="promotes", grad=False),
    Case("outer", lambda T, a, b: T.ger(a, b), (A((3,)), A((0,))), FLOATS, np.outer, grad=False,
         name="ger empty"))
for _beta, _alpha in ((1, 1), (0.5, 2), (0, 1)):
    add(Case("addmm", lambda T, x, a, b, be=_beta, al=_alpha: T.addmm(x, a, b, beta=be, alpha=al),
             (A((2, 4)), A((2, 3)), A((3, 4))), FLOATS,
             lambda x, a, b, be=_beta, al=_alpha: be * x + al * (a @ b),
             name=f"beta={_beta} alpha={_alpha}"),
        Case("addmm", lambda T, x, a, b, be=_beta, al=_alpha: x.addmm(a, b, beta=be, alpha=al),
             (A((4,)), A((2, 3)), A((3, 4))), FLOATS,
             lambda x, a, b, be=_beta, al=_alpha: be * x + al * (a @ b),
             name=f"broadcast beta={_beta} alpha={_alpha}"),
        Case("baddbmm", lambda T, x, a, b, be=_beta, al=_alpha: T.baddbmm(x, a, b, beta=be,
                                                                           alpha=al),
             (A((1, 2, 4)), A((3, 2, 3)), A((3, 3, 4))), FLOATS,
             lambda x, a, b, be=_beta, al=_alpha: be * x + al * (a @ b),
             name=f"beta={_beta} alpha={_alpha}"),
        Case("addmv", lambda T, x, a, v, be=_beta, al=_alpha: T.addmv(x, a, v, beta=be, alpha=al),
             (A((2,)), A((2, 3)), A((3,))), FLOATS,
             lambda x, a, v, be=_beta, al=_alpha: be * x + al * (a @ v),
             name=f"beta={_beta} alpha={_alpha}"))
add(Case("addmm", lambda T, x, a, b: x.clone().addmm_(a, b, alpha=2), (A((2, 4)), A((2, 3)),
                                                                        A((3, 4))), FLOATS,
         lambda x, a, b: x + 2 * (a @ b), name="addmm_"),
    Case("addmm", lambda T, x, a, b: T.addmm(x * float("nan"), a, b, beta=0),
         (A((2, 4)), A((2, 3)), A((3, 4))), FLOATS, lambda x, a, b: a @ b, name="beta=0 ignores nan",
         grad=False),
    Case("addmm", lambda T, x, a, b: T.addmm(x, a, b), (A((2, 4)), A((2, 3)), A((3, 4))), INTS,
         name="ints", grad=False),
    Case("addmm", lambda T, x, a, b: T.addmm(x, a, b, alpha=2.5, beta=-1.5),
         (A((2, 4)), A((2, 3)), A((3, 4))), ("int64",), name="int float alpha", grad=False),
    Case("baddbmm", lambda T, x, a, b: x.clone().baddbmm_(a, b, beta=2),
         (A((3, 2, 4)), A((3, 2, 3)), A((3, 3, 4))), FLOATS,
         lambda x, a, b: 2 * x + a @ b, name="baddbmm_"))

_EINSUM = [("ij,jk->ik", ((2, 3), (3, 4))), ("ij,jk", ((2, 3), (3, 4))), ("i,i->", ((5,), (5,))),
           ("i,j->ij", ((2,), (3,))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
           ("ii->i", ((3, 3),)), ("ii", ((3, 3),)), ("ij->ji", ((2, 3),)), ("ij->", ((2, 3),)),
           ("ijk->kj", ((2, 3, 4),)), ("...ij,...jk->...ik", ((2, 2, 3), (3, 4))),
           ("...ij->...j", ((2, 3, 4),)), ("b...,b...->b", ((2, 3, 4), (2, 3, 4))),
           ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))), ("ab,cd->abcd", ((2, 2), (3, 1))),
           ("ijk,ikl->", ((2, 3, 2), (2, 2, 3))), ("bn,anm,bm->ba", ((2, 3), (4, 3, 5), (2, 5))),
           ("iij->j", ((3, 3, 2),)), ("ij,ij->ij", ((2, 3), (2, 3))), ("Ab,ba->A", ((2, 3), (3, 4))),
           ("ij,jk->ik", ((2, 1), (3, 4))), ("...ij->ij", ((2, 3, 4),)),
           ("i,i->", ((0,), (0,))), ("ij,jk->ik", ((2, 0), (0, 3)))]
# int32 where PyTorch itself is consistent (its sums make int64, which some paths refuse)
_INT_OK = {"ij,jk->ik", "i,i->", "i,j->ij", "bij,bjk->bik", "ij->ji", "ij,ij->ij"}
_NO_NUMPY = {"b...,b...->b", "...ij->ij"}        # numpy refuses to drop an ellipsis
for _eq, _shapes in _EINSUM:
    _plain = 0 not in sum(_shapes, ()) and _shapes != ((2, 1), (3, 4))
    add(Case("einsum", lambda T, *xs, eq=_eq: T.einsum(eq, *xs), tuple(A(s) for s in _shapes),
             FLOATS + (("int64", "int32") if _eq in _INT_OK and _plain else ("int64",)),
             (lambda *xs, eq=_eq: np.einsum(eq, *xs)) if _eq not in _NO_NUMPY else None,
             grad=0 not in sum(_shapes, ()), gradgrad=_eq == "ij,jk->ik", name=_eq,
             rtol=None))
add(Case("einsum", lambda T, a, b: T.einsum(a, [0, 1], b, [1, 2], [0, 2]), (A((2, 3)), A((3, 4))),
         FLOATS, lambda a, b: a @ b, name="sublist"),
    Case("einsum", lambda T, a, b: T.einsum("ij,jk->ik", [a, b]), (A((2, 3)), A((3, 4))), FLOATS,
         lambda a, b: a @ b, name="operand list"),
    Case("einsum", lambda T, a, b: T.einsum("i,i", a, b), (A((2,)), A((3,))), FLOATS,
         grad=False, raises=RuntimeError, name="size mismatch"),
    Case("einsum", lambda T, a, b: T.einsum("i", a, b), (A((2,)), A((3,))), FLOATS, grad=False,
         raises=RuntimeError, name="too many operands"),
    Case("einsum", lambda T, a: T.einsum("ij->k", a), (A((2, 3)),), FLOATS, grad=False,
         raises=RuntimeError, name="unknown output"),
    Case("einsum", lambda T, a, b: T.einsum("ij,jk", a, b), (A((2, 3)), A((3, 4), dtype="float64")),
         ("float32",), grad=False, raises=RuntimeError, name="mixed dtypes"))
for _dims, _shapes in ((2, ((2, 3, 4), (3, 4, 5))), (1, ((2, 3), (3, 4))), (0, ((2,), (3,))),
                       (([1, 0], [0, 1]), ((3, 2, 4), (2, 3, 5))), (([2], [0]), ((2, 3, 4), (4, 2)))):
    add(Case("tensordot", lambda T, a, b, d=_dims: T.tensordot(a, b, d), tuple(A(s) for s in _shapes),
             FLOATS + ("int64",), lambda a, b, d=_dims: np.tensordot(a, b, d), name=f"dims={_dims}"))
add(Case("tensordot", lambda T, a, b: T.tensordot(a, b, ([0], [0])), (A((2, 3)), A((3, 2))),
         FLOATS, grad=False, raises=RuntimeError, name="size mismatch"))
add(Case("tensordot", lambda T, a, b: T.tensordot(a, b, ([0, 1], [2, 0])), (A((1, 1, 1)), A((2, 1, 2))),
         FLOATS + ("int32",), lambda a, b: np.tensordot(a, b.sum((0, 2), keepdims=True), ([0, 1], [2, 0])),
         name="a size-1 dim contracts with any size (ATen's)"))
