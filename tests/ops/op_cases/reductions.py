"""Sample cases of reductions, scans, statistics and norms: dim as None / int / tuple /
negative, keepdim, dtype=, 0-d and empty inputs, NaN, ties, every dtype."""
import numpy as np
import scipy.special as sp

from op_harness import ALL, FLOATS, INTS, NUMERIC, A, Case

CASES = []
DIMS = [None, 0, -1, (0, 1), (-1,)]


def add(*cases):
    CASES.extend(cases)


def _axis(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def reduction(op, call, ref, dtypes, kind="normal", grad=True, dims=DIMS, empty_dims=(None, 0, 1),
              name="", grad0d=True, **kw):
    """Cases of call(T, x, dim, keepdim) over dims x keepdim, 0-d and empty inputs."""
    for d in dims:
        for keep in (False, True) if d is not None else (False,):
            add(Case(op, lambda T, x, d=d, k=keep: call(T, x, d, k), (A((3, 4), kind),), dtypes,
                     (lambda x, d=d, k=keep: ref(x, d, k)) if ref else None, grad=grad,
                     name=f"{name}dim={d} keepdim={keep}", **kw))
    for d in (None, 0, -1):
        add(Case(op, lambda T, x, d=d: call(T, x, d, False), (A((), kind),), dtypes,
                 (lambda x, d=d: _ref0d(ref, x, d)) if ref else None, grad=grad and grad0d,
                 name=f"{name}0d dim={d}", **kw))
    for d in empty_dims:
        add(Case(op, lambda T, x, d=d: call(T, x, d, False), (A((0, 3), kind),), dtypes,
                 (lambda x, d=d: ref(x, d, False)) if ref else None, grad=False,
                 name=f"{name}empty dim={d}", **kw))
    add(Case(op, lambda T, x: call(T, x, 1, False), (A((2, 3, 4), kind),), dtypes,
             (lambda x: ref(x, 1, False)) if ref else None, grad=grad, name=f"{name}3d dim=1",
             **kw))


def _ref0d(ref, x, d):
    """numpy has no dims on a 0-d array: reduce it as shape (1,) along 0."""
    return ref(x, None, False) if d is None else ref(x.reshape(1), 0, False)


def _dim_kw(d, k):
    return {} if d is None else {"dim": d, "keepdim": k}


# -- sum, mean, prod -------------------------------------------------------------------------
reduction("sum", lambda T, x, d, k: T.sum(x, **_dim_kw(d, k)),
          lambda x, d, k: np.sum(x, axis=_axis(d), keepdims=k), ALL)
reduction("sum", lambda T, x, d, k: x.sum(**_dim_kw(d, k), dtype=T.float64),
          lambda x, d, k: np.sum(x, axis=_axis(d), keepdims=k), ALL, name="dtype=f64 ")
reduction("mean", lambda T, x, d, k: T.mean(x, **_dim_kw(d, k)),
          lambda x, d, k: np.mean(x, axis=_axis(d), keepdims=k), ALL)
reduction("mean", lambda T, x, d, k: x.mean(**_dim_kw(d, k), dtype=T.float32),
          lambda x, d, k: np.mean(x, axis=_axis(d), keepdims=k), INTS, grad=False,
          name="int dtype= ")
reduction("nansum", lambda T, x, d, k: T.nansum(x, **_dim_kw(d, k)),
          lambda x, d, k: np.nansum(x, axis=_axis(d), keepdims=k), ALL, kind="special",
          grad=False)
reduction("nanmean", lambda T, x, d, k: T.nanmean(x, **_dim_kw(d, k)),
          lambda x, d, k: np.nanmean(x, axis=_axis(d), keepdims=k), ALL, kind="special",
          grad=False, dims=[None, 0, -1])
reduction("nansum", lambda T, x, d, k: T.nansum(x, **_dim_kw(d, k)),
          lambda x, d, k: np.nansum(x, axis=_axis(d), keepdims=k), FLOATS, name="finite ",
          dims=[None, (0, 1)])
reduction("nanmean", lambda T, x, d, k: T.nanmean(x, **_dim_kw(d, k)),
          lambda x, d, k: np.nanmean(x, axis=_axis(d), keepdims=k), FLOATS, name="finite ",
          dims=[None, 1])
for _kind in ("normal", "int"):     # "int": zeros among the factors
    reduction("prod", lambda T, x, d, k: T.prod(x) if d is None else T.prod(x, d, keepdim=k),
              lambda x, d, k: np.prod(x, axis=_axis(d), keepdims=k and d is not None), ALL,
              kind=_kind, dims=[None, 0, -1], name=f"{_kind} ", gradgrad=_kind == "int")
add(Case("prod", lambda T, x: T.prod(x, (0, 1)), (A(),), FLOATS, grad=False, name="tuple dim",
         raises=TypeError),
    Case("prod", lambda T, x: x.prod(1, dtype=T.float64), (A((3, 4), "int"),), NUMERIC,
         lambda x: np.prod(x, 1), grad=False, name="dtype="))

# -- extremes ----------------------------------------------------------------------------------
reduction("amax", lambda T, x, d, k: T.amax(x, () if d is None else d, k),
          lambda x, d, k: np.amax(x, axis=_axis(d), keepdims=k), ALL, kind="distinct",
          empty_dims=(0, 1))
reduction("amin", lambda T, x, d, k: x.amin(() if d is None else d, k),
          lambda x, d, k: np.amin(x, axis=_axis(d), keepdims=k), ALL, kind="distinct",
          empty_dims=(0, 1))
reduction("amax", lambda T, x, d, k: T.amax(x, () if d is None else d, k),
          lambda x, d, k: np.amax(x, axis=_axis(d), keepdims=k), FLOATS, kind="small",
          name="ties ", fd=False)
reduction("amin", lambda T, x, d, k: T.amin(x, () if d is None else d, k),
          lambda x, d, k: np.amin(x, axis=_axis(d), keepdims=k), FLOATS, kind="special",
          name="nan ", grad=False)
add(Case("amax", lambda T, x: T.amax(x), (A((0, 3)),), FLOATS, name="empty full",
         raises=RuntimeError, grad=False),
    Case("amax", lambda T, x: T.amax(x, 0), (A((0, 3)),), FLOATS, name="empty dim",
         raises=IndexError, grad=False))


def _max_ref(fn, arg):
    def ref(x, d, k):
        if d is None:
            return fn(x)
        v = fn(x, axis=d, keepdims=k)
        return v, arg(x, d, k)
    return ref


def _arg(fn):
    def ref(x, d, k):
        if d is None:
            return np.asarray(fn(x.reshape(-1)))
        r = fn(x, axis=d, keepdims=k)
        return r
    return ref


reduction("max", lambda T, x, d, k: T.max(x) if d is None else T.max(x, d, keepdim=k),
          _max_ref(np.amax, _arg(np.argmax)), ALL, kind="distinct", dims=[None, 0, -1],
          empty_dims=(0, 1))
reduction("min", lambda T, x, d, k: x.min() if d is None else x.min(dim=d, keepdim=k),
          _max_ref(np.amin, _arg(np.argmin)), ALL, kind="distinct", dims=[None, 0, -1],
          empty_dims=(0, 1))
reduction("max", lambda T, x, d, k: T.max(x) if d is None else T.max(x, d, keepdim=k), None,
          FLOATS, kind="special", dims=[None, 0, -1], name="nan ", grad=False)
reduction("min", lambda T, x, d, k: T.min(x) if d is None else T.min(x, d, keepdim=k),
          _max_ref(np.amin, _arg(np.argmin)), FLOATS, kind="small", dims=[None, 0, 1],
          name="ties ", fd=False)
add(Case("max", lambda T, a, b: T.max(a, b), (A((3, 4)), A((4,))), ALL, np.maximum, name="binary"),
    Case("min", lambda T, a, b: a.min(b), (A((3, 4)), A(())), ALL, np.minimum, name="binary"),
    Case("max", lambda T, x: T.max(x), (A((0,)),), FLOATS, raises=RuntimeError, grad=False,
         name="empty"))
reduction("argmax", lambda T, x, d, k: T.argmax(x) if d is None else T.argmax(x, d, keepdim=k),
          _arg(np.argmax), ALL, kind="small", grad=False, dims=[None, 0, -1], empty_dims=(0, 1))
reduction("argmin", lambda T, x, d, k: x.argmin(d, keepdim=k),
          _arg(np.argmin), ALL, kind="small", grad=False, dims=[None, 0, -1], empty_dims=(0, 1))
reduction("argmax", lambda T, x, d, k: T.argmax(x, d, keepdim=k), None, FLOATS, kind="special",
          grad=False, dims=[None, 0, -1], name="nan ")
reduction("aminmax", lambda T, x, d, k: T.aminmax(x) if d is None else T.aminmax(x, dim=d,
                                                                                  keepdim=k),
          lambda x, d, k: (np.amin(x, axis=d, keepdims=k), np.amax(x, axis=d, keepdims=k)),
          ALL, kind="distinct", dims=[None, 0, -1], empty_dims=(0, 1))

# -- logical, counting --------------------------------------------------------------------------
reduction("all", lambda T, x, d, k: T.all(x, **_dim_kw(d, k)),
          lambda x, d, k: np.all(x, axis=_axis(d), keepdims=k), ALL, kind="small", grad=False)
reduction("any", lambda T, x, d, k: x.any(**_dim_kw(d, k)),
          lambda x, d, k: np.any(x, axis=_axis(d), keepdims=k), ALL, kind="small", grad=False)
reduction("count_nonzero", lambda T, x, d, k: T.count_nonzero(x, d),
          lambda x, d, k: np.count_nonzero(x, axis=_axis(d)), ALL, kind="small", grad=False)

# -- statistics ------------------------------------------------------------------------------
for _op, _np in (("var", np.var), ("std", np.std)):
    reduction(_op, lambda T, x, d, k, op=_op: getattr(T, op)(x, d, keepdim=k),
              lambda x, d, k, f=_np: f(x, axis=_axis(d), ddof=1, keepdims=k), ALL,
              gradgrad=True, grad0d=False)
    reduction(_op, lambda T, x, d, k, op=_op: getattr(x, op)(d, correction=0, keepdim=k),
              lambda x, d, k, f=_np: f(x, axis=_axis(d), keepdims=k), FLOATS,
              name="correction=0 ", dims=[None, (0, 1), 1])
    add(Case(_op, lambda T, x, op=_op: getattr(T, op)(x, False), (A(),), FLOATS,
             lambda x, f=_np: f(x), name="unbiased=False positional"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1, True, True), (A(),), FLOATS,
             lambda x, f=_np: f(x, 1, ddof=1, keepdims=True), name="dim, unbiased, keepdim"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 0, correction=2), (A((5, 2)),), FLOATS,
             lambda x, f=_np: f(x, 0, ddof=2), name="correction=2"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1), (A((3, 1)),), FLOATS, grad=False,
             name="dof 0"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1), (A((3, 4), "small"),), FLOATS,
             name="constant rows", fd=False))
for _op, _np in (("var_mean", np.var), ("std_mean", np.std)):
    reduction(_op, lambda T, x, d, k, op=_op: getattr(T, op)(x, d, keepdim=k),
              lambda x, d, k, f=_np: (f(x, axis=_axis(d), ddof=1, keepdims=k),
                                      np.mean(x, axis=_axis(d), keepdims=k)), ALL,
              dims=[None, 0, (0, 1)], gradgrad=True, grad0d=False)   # 0-d: dof 0, NaN (as var)
    add(Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1, correction=0), (A(),), FLOATS,
             lambda x, f=_np: (f(x, 1), np.mean(x, 1)), name="correction=0"))
reduction("logsumexp", lambda T, x, d, k: T.logsumexp(x, tuple(range(x.dim())) if d is None
                                                   else d, k),
          lambda x, d, k: sp.logsumexp(x, axis=_axis(d), keepdims=k), ALL, gradgrad=True,
          dims=[0, -1, (0, 1)], empty_dims=(0, 1))
add(Case("logsumexp", lambda T, x: T.logsumexp(x * 100, 1), (A((3, 4)),), ("float32", "float64"),
         lambda x: sp.logsumexp(x * 100, 1), name="large values", rtol=1e-5, atol=1e-3),
    Case("logsumexp", lambda T, x: T.logsumexp(x, 0), (A((7,), "special"),), FLOATS,
         grad=False, name="inf and nan"),
    Case("logsumexp", lambda T, x: T.logsumexp(x - float("inf"), 1), (A((2, 3)),), FLOATS,
         lambda x: sp.logsumexp(x - np.inf, 1), grad=False, name="all -inf"))

# -- norms ---------------------------------------------------------------------------------------
for _ord in (2, 1, float("inf"), float("-inf"), 0, 3, 0.5, -1):
    reduction("linalg_vector_norm",
              lambda T, x, d, k, o=_ord: T.linalg.vector_norm(x, o, dim=d, keepdim=k),
              lambda x, d, k, o=_ord: _vnorm(x, o, d, k), ALL, kind="nonzero",
              dims=[None, 0, (0, 1)], empty_dims=(1,) if _ord <= 0 or _ord == float("inf")
              else (None, 0, 1), name=f"ord={_ord} ", gradgrad=_ord in (2, 3))


def _vnorm(x, o, d, k):
    a = np.abs(x)
    axis = _axis(d)
    if o == 0:
        return np.sum(a != 0, axis=axis, keepdims=k).astype(np.float64)
    if o == float("inf"):
        return np.amax(a, axis=axis, keepdims=k)
    if o == float("-inf"):
        return np.amin(a, axis=axis, keepdims=k)
    return np.sum(a ** o, axis=axis, keepdims=k) ** (1 / o)


add(Case("linalg_vector_norm", lambda T, x: T.linalg.vector_norm(x, dtype=T.float64),
         (A(),), FLOATS, lambda x: np.linalg.norm(x.reshape(-1)), name="dtype="),
    Case("linalg_vector_norm", lambda T, x: T.linalg.vector_norm(x), (A((3,), "int"),), INTS,
         raises=RuntimeError, grad=False, name="ints"),
    Case("linalg_vector_norm", lambda T, x: T.linalg.vector_norm(x * 0, 2, 1), (A(),), FLOATS,
         lambda x: np.zeros(3), name="zero vector", fd=False),
    Case("norm", lambda T, x: T.norm(x), (A(),), FLOATS, lambda x: np.linalg.norm(x)),
    Case("norm", lambda T, x: x.norm(1, dim=1), (A(),), FLOATS,
         lambda x: np.linalg.norm(x, 1, axis=1)),
    Case("norm", lambda T, x: T.norm(x, "fro", dim=(0, 1), keepdim=True), (A(),), FLOATS,
         lambda x: np.linalg.norm(x, keepdims=True)),
    Case("norm", lambda T, x: T.norm(x, float("inf")), (A(),), FLOATS,
         lambda x: np.abs(x).max(), name="inf", fd=True),
    Case("linalg_norm", lambda T, x: T.linalg.norm(x), (A((2, 3, 2)),), FLOATS,
         lambda x: np.linalg.norm(x.reshape(-1))),
    Case("linalg_norm", lambda T, x: T.linalg.norm(x, 1), (A((4,)),), FLOATS,
         lambda x: np.linalg.norm(x, 1), name="vector ord"),
    Case("linalg_norm", lambda T, x: T.linalg.norm(x, float("inf")), (A((3, 4)),), FLOATS,
         lambda x: np.linalg.norm(x, np.inf), name="matrix inf"),
    Case("linalg_norm", lambda T, x: T.linalg.norm(x, dim=1), (A((3, 4)),), FLOATS,
         lambda x: np.linalg.norm(x, axis=1), name="dim"),
    Case("linalg_norm", lambda T, x: T.linalg.norm(x, "fro", dim=(1, 0)), (A((3, 4)),), FLOATS,
         lambda x: np.linalg.norm(x), name="fro dims"))
for _ord in ("fro", 1, -1, float("inf"), float("-inf")):
    add(Case("linalg_matrix_norm", lambda T, x, o=_ord: T.linalg.matrix_norm(x, o),
             (A((2, 3, 4), "distinct"),), FLOATS,
             lambda x, o=_ord: np.linalg.norm(x, o, axis=(-2, -1)), name=f"ord={_ord}"),
        Case("linalg_matrix_norm",
             lambda T, x, o=_ord: T.linalg.matrix_norm(x, o, dim=(0, 2), keepdim=True),
             (A((3, 2, 4), "distinct"),), FLOATS,
             lambda x, o=_ord: np.linalg.norm(x, o, axis=(0, 2), keepdims=True),
             name=f"ord={_ord} dims"))
add(Case("linalg_matrix_norm", lambda T, x: T.linalg.matrix_norm(x), (A((4,)),), FLOATS,
         raises=RuntimeError, grad=False, name="1-d"))

# -- scans ------------------------------------------------------------------------------------------
for _op, _np in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
    for _d in (0, 1, -1):
        add(Case(_op, lambda T, x, op=_op, d=_d: getattr(T, op)(x, d), (A((3, 4), "normal"),),
                 ALL, lambda x, f=_np, d=_d: f(x, d), name=f"dim={_d}", gradgrad=True))
    add(Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 0), (A(()),), ALL,
             lambda x, f=_np: f(x.reshape(1)).reshape(()), name="0d"),
        Case(_op, lambda T, x, op=_op: getattr(x, op)(1), (A((0, 3)),), ALL, name="empty",
             grad=False),
        Case(_op, lambda T, x, op=_op: getattr(x, op)(1, dtype=T.float64), (A((2, 3), "int"),),
             ALL, grad=False, name="dtype="),
        Case(_op, lambda T, x, op=_op: getattr(x.clone(), op + "_")(0), (A((2, 3)),), FLOATS,
             lambda x, f=_np: f(x, 0), name="inplace"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1), (A((2, 5), "int"),), FLOATS,
             lambda x, f=_np: f(x, 1), name="zeros", gradgrad=True),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 2), (A(),), FLOATS, raises=IndexError,
             grad=False, name="bad dim"))
for _op, _ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
    for _kind in ("distinct", "small", "special"):
        add(Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 1), (A((3, 5), _kind),), ALL,
                 None, grad=_kind == "distinct", name=f"{_kind}"))
    add(Case(_op, lambda T, x, op=_op: getattr(x, op)(0).values, (A((5,), "distinct"),), FLOATS,
             lambda x, u=_ufunc: u.accumulate(x), name="values"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 0), (A(()),), ALL, name="0d"),
        Case(_op, lambda T, x, op=_op: getattr(T, op)(x, 0), (A((0, 2)),), ALL, name="empty",
             grad=False))
add(Case("logcumsumexp", lambda T, x: T.logcumsumexp(x, 1), (A((3, 4)),), FLOATS,
         lambda x: np.logaddexp.accumulate(x, 1), gradgrad=True),
    Case("logcumsumexp", lambda T, x: T.logcumsumexp(x * 300, 0), (A((9,)),), ("float64",),
         lambda x: np.logaddexp.accumulate(x * 300), name="wide spread"),
    Case("logcumsumexp", lambda T, x: T.logcumsumexp(x, 0), (A((7,), "special"),), FLOATS,
         grad=False, name="infinities and nan"),
    Case("logcumsumexp", lambda T, x: x.logcumsumexp(0), (A((4,), "int"),), INTS,
         raises=None, grad=False, name="ints"))

# -- medians ------------------------------------------------------------------------------------


def _lower_median(x, axis=None):
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    s = np.sort(x, axis=axis)
    n = x.shape[axis]
    return np.take(s, (n - 1) // 2, axis=axis)


add(Case("median", lambda T, x: T.median(x), (A((3, 4), "distinct"),), ALL, _lower_median),
    Case("median", lambda T, x: x.median(), (A((3, 4), "small"),), FLOATS, _lower_median,
         name="ties", fd=False),
    Case("median", lambda T, x: T.median(x), (A((7,), "special"),), FLOATS, grad=False,
         name="nan"),
    Case("median", lambda T, x: T.median(x), (A((0,)),), FLOATS, grad=False, name="empty"),
    Case("median", lambda T, x: T.median(x), (A(()),), ALL, lambda x: x, name="0d"),
    Case("nanmedian", lambda T, x: T.nanmedian(x), (A((7,), "special"),), FLOATS, grad=False,
         name="nan"),
    Case("nanmedian", lambda T, x: T.nanmedian(x), (A((3, 4), "distinct"),), FLOATS,
         _lower_median))
for _d in (0, 1, -1):
    for _k in (False, True):
        add(Case("median_dim", lambda T, x, d=_d, k=_k: T.median(x, d, keepdim=k).values,
                 (A((3, 4), "distinct"),), ALL,
                 lambda x, d=_d, k=_k: np.expand_dims(_lower_median(x, d), d) if k
                 else _lower_median(x, d), name=f"dim={_d} keepdim={_k}"),
            Case("median_dim", lambda T, x, d=_d, k=_k: T.median(x, d, keepdim=k),
                 (A((3, 4), "distinct"),), ALL, name=f"with indices dim={_d} keepdim={_k}"))
add(Case("median_dim", lambda T, x: T.median(x, 1), (A((3, 5), "special"),), FLOATS, grad=False,
         name="nan rows"),
    Case("median_dim", lambda T, x: T.median(x, 0), (A(()),), ALL, name="0d"),
    Case("median_dim", lambda T, x: T.median(x, 0), (A((0, 2)),), FLOATS, grad=False,
         raises=IndexError, name="empty dim"),
    Case("nanmedian_dim", lambda T, x: T.nanmedian(x, 1), (A((3, 5), "special"),), FLOATS,
         grad=False, name="nan rows"),
    Case("nanmedian_dim", lambda T, x: x.nanmedian(0), (A((4, 3), "distinct"),), FLOATS,
         name="plain"))
