"""What the fuzz test calls: public ops and Tensor methods, each with a hypothesis
strategy of valid and invalid arguments, run the same way on dispatchtorch and PyTorch.

An argument that is a tensor is a `Ten` recipe (numpy data, dtype name): each library
builds its own tensor from the same numpy array, so both see the same values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

DTYPES = ("float32", "float64", "int64", "int32", "bool")
FLOATS = ("float32", "float64")


@dataclass(frozen=True)
class Ten:
    """A tensor argument: its values and dtype."""
    data: np.ndarray
    dtype: str

    def make(self, T, device):
        flat = T.tensor(self.data.reshape(-1).tolist(), dtype=getattr(T, self.dtype),
                        device=device)
        return flat.reshape(self.data.shape).clone()

    def __repr__(self):
        return f"Ten({self.dtype}{list(self.data.shape)})"


@st.composite
def shapes(draw, max_dims=3, max_side=4):
    return tuple(draw(st.lists(st.integers(0, max_side), max_size=max_dims)))


@st.composite
def tensors(draw, shape=None, dtypes=DTYPES, unique=False):
    shape = draw(shapes()) if shape is None else shape
    dt = draw(st.sampled_from(dtypes))
    n = int(np.prod(shape)) if shape else 1
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    if dt == "bool":
        data = rng.random(n) < 0.5
    elif dt.startswith("int"):
        data = rng.permutation(n) - n // 2 if unique else rng.integers(-4, 5, n)
    else:
        data = np.round(rng.standard_normal(n) * 2, 3)
        if unique:
            data = np.sort(data) + np.arange(n) * 1e-2
            rng.shuffle(data)
    return Ten(np.asarray(data).reshape(shape), dt)


def like_shape(draw, t):
    """Another shape: t's, a broadcastable one, or a mismatching one."""
    shape = t.data.shape
    choice = draw(st.integers(0, 3))
    if choice == 0 or not shape:
        return shape
    if choice == 1:
        return shape[1:]
    if choice == 2:
        return tuple(1 if i % 2 else n for i, n in enumerate(shape))
    return draw(shapes())


def dims(t, allow_none=True, allow_tuple=True):
    """A dim argument: in range, out of range, negative, a tuple, a wrong type."""
    nd = t.data.ndim
    opts = [st.integers(-nd - 2, nd + 1), st.sampled_from(["0", 1.5])]
    if allow_none:
        opts.append(st.none())
    if allow_tuple and nd:
        opts.append(st.lists(st.integers(-nd - 1, nd), max_size=3).map(tuple))
    return st.one_of(*opts)


KEEPDIM = st.sampled_from([False, True, False, True, None, 1])
SCALARS = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0, True]))


def no_args(t):
    return st.just(((), {}))


@st.composite
def other_tensor_or_scalar(draw, t):
    if draw(st.booleans()):
        return (draw(SCALARS),), {}
    return (draw(tensors(shape=like_shape(draw, t))),), {}


@st.composite
def alpha_args(draw, t):
    (other,), _ = draw(other_tensor_or_scalar(t))
    kw = {"alpha": draw(st.sampled_from([2, 0.5, -1, True]))} if draw(st.booleans()) else {}
    return (other,), kw


@st.composite
def reduce_args(draw, t):
    kw = {}
    d = draw(dims(t))
    if draw(st.booleans()):
        kw["keepdim"] = draw(KEEPDIM)
    if d is None and "keepdim" in kw:
        return (), {}
    return (d,), kw


@st.composite
def single_dim_reduce(draw, t):
    kw = {"keepdim": draw(KEEPDIM)} if draw(st.booleans()) else {}
    return (draw(dims(t, allow_none=False, allow_tuple=False)),), kw


@st.composite
def dim_only(draw, t):
    return (draw(dims(t, allow_none=False, allow_tuple=False)),), {}


@st.composite
def two_dims(draw, t):
    d = dims(t, allow_none=False, allow_tuple=False)
    return (draw(d), draw(d)), {}


@st.composite
def reshape_args(draw, t):
    n = t.data.size
    opts = [(n,), (-1,), (1, -1), (n, 1), (-1, -1), (n + 1,), (2, -1), (0, -1)]
    return (draw(st.sampled_from(opts)),), {}


@st.composite
def permute_args(draw, t):
    nd = t.data.ndim
    perm = tuple(draw(st.permutations(range(nd)))) if nd else ()
    if draw(st.integers(0, 3)) == 0:
        perm = perm[:-1] if perm else (0,)
    return (perm,), {}


@st.composite
def expand_args(draw, t):
    shape = t.data.shape
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return ((2,) + shape,), {}
    if choice == 1:
        return (tuple(3 if n == 1 else n for n in shape) if shape else (3,),), {}
    return (tuple(n + 1 for n in shape) or (-2,),), {}


@st.composite
def narrow_args(draw, t):
    d = draw(dims(t, allow_none=False, allow_tuple=False))
    return (d, draw(st.integers(-2, 4)), draw(st.integers(-1, 3))), {}


@st.composite
def select_args(draw, t):
    return (draw(dims(t, allow_none=False, allow_tuple=False)), draw(st.integers(-5, 4))), {}


@st.composite
def split_args(draw, t):
    return (draw(st.one_of(st.integers(-1, 3), st.just([1, 1]))),
            draw(dims(t, allow_none=False, allow_tuple=False))), {}


@st.composite
def chunk_args(draw, t):
    return (draw(st.integers(-1, 3)), draw(dims(t, allow_none=False, allow_tuple=False))), {}


@st.composite
def flip_args(draw, t):
    nd = t.data.ndim
    return (tuple(draw(st.lists(st.integers(-nd - 1, nd), max_size=2))),), {}


@st.composite
def roll_args(draw, t):
    return (draw(st.integers(-3, 3)), draw(dims(t, allow_tuple=False))), {}


@st.composite
def index_select_args(draw, t):
    d = draw(dims(t, allow_none=False, allow_tuple=False))
    idx = Ten(np.asarray(draw(st.lists(st.integers(-1, 4), max_size=4)), dtype=np.int64),
              draw(st.sampled_from(["int64", "int64", "int32", "float32"])))
    return (d, idx), {}


@st.composite
def index_add_args(draw, t):
    (d, idx), _ = draw(index_select_args(t))
    shape = list(t.data.shape) or [1]
    if isinstance(d, int) and -len(shape) <= d < len(shape):
        shape[d] = len(idx.data)
    if draw(st.integers(0, 3)) == 0:
        shape = list(draw(shapes()))
    src = draw(tensors(shape=tuple(shape) if t.data.ndim else (), dtypes=(t.dtype, "float64")))
    return (d, idx, src), {}


@st.composite
def gather_args(draw, t):
    d = draw(dims(t, allow_none=False, allow_tuple=False))
    shape = t.data.shape if draw(st.booleans()) else draw(shapes())
    idx = draw(tensors(shape=shape, dtypes=("int64",)))
    return (d, Ten(np.abs(idx.data) % 4, "int64")), {}


@st.composite
def masked_fill_args(draw, t):
    mask = draw(tensors(shape=like_shape(draw, t), dtypes=("bool", "bool", "int64")))
    value = draw(st.one_of(SCALARS, st.just(Ten(np.asarray(2.0), "float32"))))
    return (mask, value), {}


@st.composite
def clamp_args(draw, t):
    lo = draw(st.one_of(st.none(), st.integers(-2, 1), st.just(-0.5)))
    hi = draw(st.one_of(st.none(), st.integers(-1, 2), st.just(0.5)))
    return (lo, hi), {}


@st.composite
def matmul_args(draw, t):
    shape = t.data.shape
    other = (shape[-1],) if shape and draw(st.booleans()) else draw(shapes())
    if shape and draw(st.booleans()):
        other = (shape[-1], draw(st.integers(0, 3)))
    return (draw(tensors(shape=other, dtypes=(t.dtype, "float32"))),), {}


@st.composite
def addmm_args(draw, t):
    m, k, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    a = draw(tensors(shape=(m, k), dtypes=(t.dtype,)))
    b = draw(tensors(shape=(k if draw(st.integers(0, 4)) else k + 1, n), dtypes=(t.dtype,)))
    return (a, b), {}


@st.composite
def where_args(draw, t):
    other = draw(tensors(shape=like_shape(draw, t), dtypes=(t.dtype, "float64")))
    cond = draw(tensors(shape=like_shape(draw, t), dtypes=("bool",)))
    return (cond, other), {}


@st.composite
def cat_args(draw, t):
    other = draw(tensors(shape=like_shape(draw, t), dtypes=(t.dtype, "float64")))
    return (draw(dims(t, allow_none=False, allow_tuple=False)),), {"others": [other]}


@st.composite
def softmax_args(draw, t):
    return (draw(dims(t, allow_none=False, allow_tuple=False)),), {}


@st.composite
def topk_args(draw, t):
    return (draw(st.integers(-1, 4)),), (
        {"dim": draw(dims(t, allow_none=False, allow_tuple=False))} if draw(st.booleans()) else {})


@st.composite
def tril_args(draw, t):
    return ((draw(st.integers(-2, 2)),) if draw(st.booleans()) else ()), {}


@st.composite
def fill_args(draw, t):
    return (draw(st.one_of(SCALARS, st.just(float("nan")), st.just(2 ** 40))),), {}


@st.composite
def copy_args(draw, t):
    return (draw(tensors(shape=like_shape(draw, t))),), {}


@st.composite
def pow_args(draw, t):
    if draw(st.booleans()):
        return (draw(st.sampled_from([2, 0, -1, 0.5, 3])),), {}
    return (draw(tensors(shape=like_shape(draw, t))),), {}


@st.composite
def cumsum_args(draw, t):
    return (draw(dims(t, allow_none=False, allow_tuple=False)),), {}


@st.composite
def scatter_args(draw, t):
    (d, idx), _ = draw(gather_args(t))
    src = draw(st.one_of(SCALARS, tensors(shape=idx.data.shape, dtypes=(t.dtype, "float64"))))
    return (d, idx, src), {}


@st.composite
def repeat_args(draw, t):
    nd = t.data.ndim
    reps = tuple(draw(st.lists(st.integers(0, 2), min_size=max(nd - 1, 0), max_size=nd + 1)))
    return (reps,), {}


@st.composite
def take_args(draw, t):
    n = t.data.size
    idx = draw(st.lists(st.integers(-n - 1, n), max_size=4))
    return (Ten(np.asarray(idx, dtype=np.int64), "int64"),), {}


@st.composite
def unflatten_args(draw, t):
    d = draw(dims(t, allow_none=False, allow_tuple=False))
    return (d, draw(st.sampled_from([(1, -1), (-1,), (2, 2), (0, -1), (-1, -1)]))), {}


@st.composite
def diagonal_args(draw, t):
    d = dims(t, allow_none=False, allow_tuple=False)
    return (draw(st.integers(-2, 2)), draw(d), draw(d)), {}


@st.composite
def kth_args(draw, t):
    kw = {"keepdim": draw(KEEPDIM)} if draw(st.booleans()) else {}
    return (draw(st.integers(-1, 4)), draw(dims(t, allow_none=False, allow_tuple=False))), kw


@st.composite
def lerp_args(draw, t):
    end = draw(tensors(shape=like_shape(draw, t), dtypes=(t.dtype, "float64")))
    return (end, draw(st.sampled_from([0.5, 0.0, 2.0]))), {}


@st.composite
def same_shape_other(draw, t):
    return (draw(tensors(shape=like_shape(draw, t), dtypes=(t.dtype, "float32", "int64"))),), {}


@st.composite
def nan_to_num_args(draw, t):
    return (), {k: v for k, v in (("nan", draw(st.sampled_from([None, 0.0, 1.5]))),
                                  ("posinf", draw(st.sampled_from([None, 9.0])))) if v is not None}


@st.composite
def index_put_args(draw, t):
    (d, idx), _ = draw(index_select_args(t))
    values = draw(st.one_of(tensors(shape=(), dtypes=(t.dtype, "float64")),
                            tensors(shape=(len(idx.data),), dtypes=(t.dtype,))))
    return ((idx,), values), {"accumulate": draw(st.booleans())}


@st.composite
def aminmax_args(draw, t):
    kw = {}
    if draw(st.booleans()):
        kw["dim"] = draw(dims(t, allow_tuple=False))
    if draw(st.booleans()):
        kw["keepdim"] = draw(KEEPDIM)
    return (), kw


# name -> (call form, argument strategy, input dtypes, flags)
# form: "method" (x.name(*args)), "function" (T.name(x, *args)), "cat"/"stack"
UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu", "floor",
         "round", "sign", "reciprocal", "isnan", "logical_not", "square", "ceil", "trunc"]
BINARY = ["mul", "div", "maximum", "minimum", "eq", "lt", "ge", "remainder", "floor_divide",
          "atan2", "logical_and", "bitwise_and", "fmod", "true_divide"]

OPS = {}
for _n in UNARY:
    OPS[_n] = ("method", no_args, DTYPES, ())
for _n in BINARY:
    OPS[_n] = ("method", other_tensor_or_scalar, DTYPES, ())
OPS.update({
    "add": ("method", alpha_args, DTYPES, ()),
    "sub": ("method", alpha_args, DTYPES, ()),
    "pow": ("method", pow_args, DTYPES, ()),
    "sum": ("method", reduce_args, DTYPES, ()),
    "mean": ("method", reduce_args, DTYPES, ()),
    "amax": ("method", reduce_args, DTYPES, ()),
    "amin": ("method", reduce_args, DTYPES, ()),
    "std": ("method", reduce_args, DTYPES, ()),
    "var": ("method", reduce_args, DTYPES, ()),
    "logsumexp": ("method", single_dim_reduce, DTYPES, ()),
    "all": ("method", reduce_args, DTYPES, ()),
    "any": ("method", reduce_args, DTYPES, ()),
    "prod": ("method", single_dim_reduce, DTYPES, ()),
    "argmax": ("method", single_dim_reduce, DTYPES, ("unique",)),
    "argmin": ("method", single_dim_reduce, DTYPES, ("unique",)),
    "reshape": ("method", reshape_args, DTYPES, ()),
    "view": ("method", reshape_args, DTYPES, ()),
    "transpose": ("method", two_dims, DTYPES, ()),
    "permute": ("method", permute_args, DTYPES, ()),
    "squeeze": ("method", dim_only, DTYPES, ()),
    "unsqueeze": ("method", dim_only, DTYPES, ()),
    "flatten": ("method", two_dims, DTYPES, ()),
    "expand": ("method", expand_args, DTYPES, ()),
    "narrow": ("method", narrow_args, DTYPES, ()),
    "select": ("method", select_args, DTYPES, ()),
    "split": ("method", split_args, DTYPES, ()),
    "chunk": ("method", chunk_args, DTYPES, ()),
    "flip": ("method", flip_args, DTYPES, ()),
    "roll": ("method", roll_args, DTYPES, ()),
    "movedim": ("method", two_dims, DTYPES, ()),
    "index_select": ("method", index_select_args, DTYPES, ()),
    "index_add": ("method", index_add_args, FLOATS + ("int64",), ()),
    "gather": ("method", gather_args, DTYPES, ()),
    "masked_fill": ("method", masked_fill_args, DTYPES, ()),
    "where": ("where", where_args, DTYPES, ()),
    "cat": ("cat", cat_args, DTYPES, ()),
    "stack": ("stack", cat_args, DTYPES, ()),
    "softmax": ("method", softmax_args, DTYPES, ()),
    "log_softmax": ("method", softmax_args, DTYPES, ()),
    "cumsum": ("method", cumsum_args, DTYPES, ()),
    "cumprod": ("method", cumsum_args, DTYPES, ()),
    "sort": ("method", cumsum_args, DTYPES, ("unique",)),
    "topk": ("method", topk_args, FLOATS + ("int64",), ("unique",)),
    "clamp": ("method", clamp_args, DTYPES, ()),
    "matmul": ("method", matmul_args, FLOATS + ("int64",), ()),
    "addmm": ("addmm", addmm_args, FLOATS, ()),
    "tril": ("method", tril_args, DTYPES, ()),
    "triu": ("method", tril_args, DTYPES, ()),
    # in-place: self is compared too
    "add_": ("method", alpha_args, DTYPES, ("inplace",)),
    "mul_": ("method", other_tensor_or_scalar, DTYPES, ("inplace",)),
    "clamp_": ("method", clamp_args, DTYPES, ("inplace",)),
    "fill_": ("method", fill_args, DTYPES, ("inplace",)),
    "zero_": ("method", no_args, DTYPES, ("inplace",)),
    "copy_": ("method", copy_args, DTYPES, ("inplace",)),
    "index_add_": ("method", index_add_args, FLOATS + ("int64",), ("inplace",)),
    "masked_fill_": ("method", masked_fill_args, DTYPES, ("inplace",)),
    "scatter": ("method", scatter_args, DTYPES, ()),
    "scatter_add": ("method", scatter_args, FLOATS + ("int64",), ()),
    "scatter_": ("method", scatter_args, DTYPES, ("inplace",)),
    "repeat": ("method", repeat_args, DTYPES, ()),
    "tile": ("method", repeat_args, DTYPES, ()),
    "take": ("method", take_args, DTYPES, ()),
    "unflatten": ("method", unflatten_args, DTYPES, ()),
    "diagonal": ("method", diagonal_args, DTYPES, ()),
    "kthvalue": ("method", kth_args, FLOATS + ("int64",), ("unique",)),
    "unbind": ("method", dim_only, DTYPES, ()),
    "lerp": ("method", lerp_args, FLOATS, ()),
    "nan_to_num": ("method", nan_to_num_args, DTYPES, ()),
    "masked_select": ("method", masked_fill_args, DTYPES, ("first_arg",)),
    "index_put_": ("method", index_put_args, DTYPES, ("inplace",)),
    "mm": ("method", matmul_args, FLOATS + ("int64",), ()),
    "dot": ("method", same_shape_other, FLOATS + ("int64",), ()),
    "outer": ("method", same_shape_other, FLOATS + ("int64",), ()),
    "cummax": ("method", cumsum_args, FLOATS + ("int64",), ("unique",)),
    "logcumsumexp": ("method", cumsum_args, FLOATS, ()),
    "count_nonzero": ("method", dim_only, DTYPES, ()),
    "std_mean": ("function", reduce_args, FLOATS, ()),
    "var_mean": ("function", reduce_args, FLOATS, ()),
    "aminmax": ("method", aminmax_args, FLOATS + ("int64",), ()),
    "isinf": ("method", no_args, DTYPES, ()),
    "expm1": ("method", no_args, DTYPES, ()),
    "log1p": ("method", no_args, DTYPES, ()),
    "rsqrt": ("method", no_args, DTYPES, ()),
    "clamp_min": ("method", fill_args, DTYPES, ()),
    "fmax": ("method", other_tensor_or_scalar, DTYPES, ()),
    "hypot": ("method", other_tensor_or_scalar, FLOATS, ()),
})
