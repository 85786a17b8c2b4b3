"""Sample cases of the deterministic factories (the random ones are checked by their
statistics in test_creation.py)."""
import numpy as np

from op_harness import ALL, FLOATS, A, Case

CASES = []
F = ("float32",)          # factories take no input: one run (the dtype is in the call)


def add(*cases):
    CASES.extend(cases)


for _dt in ALL:
    add(Case("full", lambda T, d=_dt: T.full((2, 3), 1.5 if d != "bool" else True,
                                             dtype=getattr(T, d)), (), F, grad=False,
             name=f"dtype={_dt}"),
        Case("zeros", lambda T, d=_dt: T.zeros(2, 3, dtype=getattr(T, d)), (), F, grad=False,
             name=f"dtype={_dt}"),
        Case("ones", lambda T, d=_dt: T.ones((3,), dtype=getattr(T, d)), (), F, grad=False,
             name=f"dtype={_dt}"),
        Case("empty", lambda T, d=_dt: T.empty(2, 0, dtype=getattr(T, d)), (), F, grad=False,
             name=f"dtype={_dt}"))
add(Case("full", lambda T: T.full((2,), 3), (), F, grad=False, name="int fill"),
    Case("full", lambda T: T.full((2,), True), (), F, grad=False, name="bool fill"),
    Case("full", lambda T: T.full((), 2.5), (), F, grad=False, name="0d"),
    Case("full", lambda T: T.full((2,), 1.5, dtype=T.int32), (), F, grad=False,
         name="float into int"),
    Case("full", lambda T: T.full((-1,), 1.0), (), F, grad=False, raises=RuntimeError,
         name="negative size"),
    Case("zeros", lambda T: T.zeros(()), (), F, grad=False, name="0d"),
    Case("zeros", lambda T, x: T.zeros_like(x), (A((2, 3)),), ALL, grad=False, name="like"),
    Case("ones", lambda T, x: T.ones_like(x, dtype=T.int8), (A((2, 3)),), ALL, grad=False,
         name="like dtype"),
    Case("full", lambda T, x: T.full_like(x, 7), (A((2, 3)),), ALL, grad=False, name="like"),
    Case("ones", lambda T: T.ones(2, 3, device="cpu"), (), F, grad=False, name="device"),
    Case("zeros", lambda T, x: x.new_zeros((2,)), (A((3,)),), ALL, grad=False, name="new_zeros"))
for _args, _kw in [((5,), {}), ((2, 9), {}), ((10, 0, -3), {}), ((1.5, 4), {}),
                   ((0, 1, 0.1), {}), ((-1, 1, 0.3), {"dtype": "float64"}), ((5,), {"dtype": "float16"}),
                   ((0, 10 ** 8 + 1, 10 ** 7), {"dtype": "float32"}), ((0, 2.5, 0.5), {"dtype": "int64"}),
                   ((0,), {}), ((3, 3), {}), ((0, 5, 0), {}), ((5, 0, 1), {}),
                   ((0.0, 1.0, 1 / 3), {}), ((-5, 5), {"dtype": "bfloat16"}),
                   ((0.5, 5.7, 1.5), {"dtype": "int32"}), ((0.5, 5.7, 1.5), {"dtype": "int64"}),
                   ((0.9, 3.2, 0.9), {"dtype": "int16"}), ((0.9, 3.2, 0.9), {"dtype": "int64"})]:
    add(Case("arange", lambda T, a=_args, k=_kw: T.arange(*a, **{n: getattr(T, v)
                                                                 for n, v in k.items()}),
             (), F, grad=False, name=f"{_args} {_kw}",
             ref=(lambda a=_args: np.arange(*a)) if _args not in ((0, 5, 0), (5, 0, 1)) and
             _kw.get("dtype") in (None, "float64", "float16", "float32") else None))
for _args, _dt in [((0, 1, 5), None), ((-2, 3, 7), None), ((0, 1, 5), "int64"), ((1, 1, 1), None),
                   ((0, 1, 0), None), ((3, -3, 4), "float64"), ((0, 10, 11), "bfloat16")]:
    add(Case("linspace", lambda T, a=_args, d=_dt: T.linspace(*a, dtype=getattr(T, d) if d else None),
             (), F, grad=False, name=f"{_args} {_dt}",
             ref=(lambda a=_args: np.linspace(*a)) if _dt in (None, "float64") else None),
        Case("logspace", lambda T, a=_args, d=_dt: T.logspace(*a, base=2.0,
                                                              dtype=getattr(T, d) if d else None),
             (), F, grad=False, name=f"{_args} {_dt}",
             ref=(lambda a=_args: np.logspace(*a, base=2.0)) if _dt in (None, "float64")
             else None))
add(Case("logspace", lambda T: T.logspace(-1, 2, 4), (), F, grad=False, name="base 10",
         ref=lambda: np.logspace(-1, 2, 4)),
    Case("linspace", lambda T: T.linspace(0, 1, -1), (), F, grad=False, raises=RuntimeError,
         name="negative steps"),
    Case("eye", lambda T: T.eye(3), (), F, grad=False, ref=lambda: np.eye(3)),
    Case("eye", lambda T: T.eye(2, 4, dtype=T.int64), (), F, grad=False, name="rect int",
         ref=lambda: np.eye(2, 4)),
    Case("eye", lambda T: T.eye(0), (), F, grad=False, name="empty"))
for _r, _c, _o in [(3, 4, 1), (3, 3, 0), (4, 3, -1), (0, 3, 0), (3, 4, -5), (2, 5, 7)]:
    add(Case("tril_indices", lambda T, r=_r, c=_c, o=_o: T.tril_indices(r, c, o), (), F,
             grad=False, name=f"{_r},{_c},{_o}",
             ref=lambda r=_r, c=_c, o=_o: np.stack(np.tril_indices(r, o, c)) if r else
             np.zeros((2, 0))),
        Case("triu_indices", lambda T, r=_r, c=_c, o=_o: T.triu_indices(r, c, o), (), F,
             grad=False, name=f"{_r},{_c},{_o}",
             ref=lambda r=_r, c=_c, o=_o: np.stack(np.triu_indices(r, o, c)) if r else
             np.zeros((2, 0))))
add(Case("tril_indices", lambda T: T.tril_indices(3, 3, dtype=T.int32), (), F, grad=False,
         name="int32"),
    Case("meshgrid", lambda T, a, b: T.meshgrid(a, b, indexing="ij"), (A((2,)), A((3,))), ALL,
         lambda a, b: tuple(np.meshgrid(a, b, indexing="ij"))),
    Case("meshgrid", lambda T, a, b, c: T.meshgrid(a, b, c, indexing="xy"),
         (A((2,)), A((3,)), A(())), ALL, lambda a, b, c: tuple(np.meshgrid(a, b, c, indexing="xy")),
         name="xy"),
    Case("meshgrid", lambda T, a, b: T.meshgrid([a, b], indexing="xy"), (A((2,)), A((3,))),
         FLOATS, lambda a, b: tuple(np.meshgrid(a, b)), name="list"),
    Case("meshgrid", lambda T, a, b: T.meshgrid(a, b, indexing="ij"), (A((2, 2)), A((3,))), FLOATS,
         grad=False, raises=RuntimeError, name="2-d"),
    Case("meshgrid", lambda T, a: T.meshgrid(a, a, indexing="yx"), (A((2,)),), FLOATS,
         grad=False, raises=RuntimeError, name="bad indexing"))
