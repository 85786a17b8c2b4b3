"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial and the
in-place fills (uniform_, normal_, ...), with ATen's draws from the Generator.

Apart from creation.py because they sit higher: they draw from random.py's Generator
(whose get_state makes a tensor with creation) and the fills write through memory's copy_.
Draws go through `R.draw` and fills through `_fill_random` by name, so the capture's
tracer can swap both (see _capture/tracer.py install)."""
from __future__ import annotations

import math
import operator

import numpy as np

from .._layout import require_strided as _require_strided
from .. import _dtype as D
from .._shape import as_shape
from .._tensor import Tensor
from . import _random_streams as S
from . import random as R
from .creation import _cast_host, _dtype_or, _from_host, _like, _place, empty, made_like, size_arg
from .memory import copy_
from ._out import takes_out
from ._bare_support import check_op as bare_check


def _float_dtype(dtype, op):
    dt = _dtype_or(dtype, D.get_default_dtype())
    if not dt.is_grad or dt.bare:       # PyTorch 2.13 draws no integer or float8 values here
        raise NotImplementedError(f"\"{op}\" not implemented for '{dt.pt_name}'")
    return dt


def _shape_only(device):
    """A device without data (meta): random values would be drawn only to be dropped."""
    return _place(device).type == "meta"


def _numel(shape):
    return math.prod(shape)


def _drawn(values, shape, dt, device, requires_grad, op):
    return _from_host(_cast_host(np.asarray(values).reshape(shape), dt), dt, device,
                      requires_grad, op)


@takes_out("rand", "cast", factory=True)
def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False):
    _require_strided(layout, "rand")
    shape = as_shape(size_arg(sizes, size, "rand"), "rand")
    dt = _float_dtype(dtype, "check_uniform_bounds")
    if _shape_only(device):
        return empty(shape, dtype=dt, device=device, requires_grad=requires_grad)
    if dt.is_complex:      # ATen: uniform_ on view_as_real, real and imaginary parts
        rt = dt.to_real()
        values = R.draw(generator, S.uniform, 2 * _numel(shape), rt.name, 0.0, 1.0, rt.np)
        return _drawn(values.view(dt.np), shape, dt, device, requires_grad, "rand")
    values = R.draw(generator, S.uniform, _numel(shape), dt.name, 0.0, 1.0, dt.np)
    return _drawn(values, shape, dt, device, requires_grad, "rand")


@takes_out("randn", "cast", factory=True)
def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None, pin_memory=False):
    _require_strided(layout, "randn")
    shape = as_shape(size_arg(sizes, size, "randn"), "randn")
    dt = _float_dtype(dtype, "normal_kernel_cpu")
    if _shape_only(device):
        return empty(shape, dtype=dt, device=device, requires_grad=requires_grad)
    if dt.is_complex:      # ATen: normal_(view_as_real(self), 0, 1/sqrt(2))
        rt = dt.to_real()
        values = R.draw(generator, S.normal, 2 * _numel(shape), rt.name, 0.0, 0.5 ** 0.5)
        values = np.asarray(values, rt.np)
        return _drawn(values.view(dt.np), shape, dt, device, requires_grad, "randn")
    values = R.draw(generator, S.normal, _numel(shape), dt.name)
    return _drawn(values, shape, dt, device, requires_grad, "randn")


# dtypes whose random_(from, to) switches to 64-bit draws for spans of 2**32 and more
_WIDE_DRAWS = ("int64", "float64", "float32", "bfloat16")


@takes_out("randint", "cast", factory=True)
def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False,
            low=None, high=None, out=None, layout=None, pin_memory=False):
    _require_strided(layout, "randint")
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if high is None:
        if len(args) == 1:
            low, high = 0 if low is None else low, args[0]
        elif len(args) == 2:
            low, high = args
        elif low is None:
            raise TypeError("randint() missing required argument 'high'")
    low = 0 if low is None else low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dtype_or(dtype, D.int64)
    shape = tuple(size)
    if dt.bare:
        bare_check("random", dt)
    if _shape_only(device):
        return empty(shape, dtype=dt, device=device, requires_grad=requires_grad)
    values = R.draw(generator, S.random_from_to, _numel(shape), int(low), int(high) - int(low),
                    dt.name in _WIDE_DRAWS)
    return _drawn(values, shape, dt, device, requires_grad, "randint")


@takes_out("randperm", "cast", factory=True)
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None,
             layout=None, pin_memory=False):
    _require_strided(layout, "randperm")
    try:
        if isinstance(n, bool):
            raise TypeError
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}") from None
    if n < 0:
        raise RuntimeError(f"randperm(): Trying to create tensor with negative dimension {n}: "
                           f"[{n}]")
    dt = _dtype_or(dtype, D.int64)
    if dt.bare:
        bare_check("randperm", dt)
    return _drawn(R.draw(generator, S.randperm, n), (n,), dt, device, requires_grad, "randperm")


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return made_like("rand_like", input, memory_format,
                     lambda shape: rand(shape, dtype=dt, device=dev), requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return made_like("randn_like", input, memory_format,
                     lambda shape: randn(shape, dtype=dt, device=dev), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    dt, dev = _like(input, dtype, device)
    return made_like("randint_like", input, memory_format,
                     lambda shape: randint(low, high, shape, dtype=dt, device=dev), requires_grad)


@takes_out("normal", "cast", factory=True)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, out=None):
    """As ATen: a standard normal of the result's shape, then `* std + mean` in its dtype."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        m = mean._host() if isinstance(mean, Tensor) else mean
        s = std._host() if isinstance(std, Tensor) else std
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = tuple(np.broadcast_shapes(np.shape(m), np.shape(s)))
        dt = ref.dtype
        z = _cast_host(R.draw(generator, S.normal, _numel(shape), dt.name), dt).reshape(shape)
        with np.errstate(all="ignore"):
            values = (z * np.asarray(s, dtype=dt.np)).astype(dt.np) + np.asarray(m, dtype=dt.np)
        return _from_host(values.astype(dt.np), dt, ref.device, requires_grad, "normal")
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _float_dtype(dtype, "normal_kernel_cpu")
    shape = tuple(size)
    values = R.draw(generator, S.normal, _numel(shape), dt.name, mean, std)
    return _drawn(values, shape, dt, device, requires_grad, "normal")


def _check_probs(probs, op):
    if np.any((probs < 0) | (probs > 1)) or np.any(np.isnan(probs)):
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1")


@takes_out("bernoulli", "cast", factory=True)
def bernoulli(input, p=None, *, generator=None, out=None):
    if input._dtype.bare:
        bare_check("bernoulli", input._dtype)
    if p is not None:
        return empty(input._shape, dtype=input.dtype, device=input.device).bernoulli_(
            p, generator=generator)
    probs = np.asarray(input.detach()._host(), dtype=np.float64)
    _check_probs(probs, "bernoulli")
    values = R.draw(generator, S.bernoulli_tensor, probs, input.dtype is D.float64)
    return _drawn(values, input._shape, input.dtype, input.device, False, "bernoulli")


_ATEN_INT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                   "uint8": "Byte", "bool": "Bool"}


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    # ATen's checks, in its order and words
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_ATEN_INT_NAMES.get(input.dtype.name, input.dtype.name)}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    probs = np.asarray(input.detach()._host(), dtype=np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    if np.any(rows < 0) or not np.all(np.isfinite(rows)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = R.draw(generator, S.multinomial, rows, num_samples, replacement, input.dtype.name)
    out = out.reshape(probs.shape[:-1] + (num_samples,))
    return _from_host(out, D.int64, input.device, False, "multinomial")


def _memory_order(t):
    """The axes of t from outermost to innermost in memory: ATen's TensorIterator fills a
    strided tensor in that order, so a transposed view gets its draws as its base would."""
    strides = t.stride()
    return sorted(range(len(strides)), key=lambda d: -strides[d])


def random_values(shape, order, draw, args, generator):
    """The values a random fill of a tensor of `shape` gets, drawn in memory `order`."""
    values = np.asarray(R.draw(generator, draw, _numel(shape), *args))
    return values.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _fill_random(self, draw, *args, generator=None):
    """self.copy_(values drawn as ATen draws them for self); meta draws nothing."""
    if self._place.type == "meta":
        return copy_(self, empty(self._shape, dtype=self.dtype, device=self.device))
    values = random_values(self._shape, _memory_order(self), draw, args, generator)
    src = _from_host(_cast_host(values, self.dtype), self.dtype, self.device)
    return copy_(self, src)


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    if self._dtype.bare:
        bare_check("uniform", self._dtype)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    return _fill_random(self, S.uniform, self.dtype.name, a, b, self.dtype.np, generator=generator)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if self._dtype.bare:
        bare_check("normal", self._dtype)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill_random(self, S.normal, self.dtype.name, mean, std, self.is_contiguous(),
                        generator=generator)


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        probs = np.broadcast_to(np.asarray(p.detach()._host(), dtype=np.float64), self._shape)
        _check_probs(probs, "bernoulli_")
        return _fill_random(self, lambda eng, n: S.bernoulli_tensor(eng, probs, p.dtype is D.float64),
                            generator=generator)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill_random(self, S.bernoulli_scalar, p, generator=generator)


def _random_max(dt):
    """The largest value random_() draws for dt: 2**digits for floats, the max for ints."""
    if dt.is_floating_point:
        return 2 ** S.DIGITS[dt.name]
    return 1 if dt is D.bool_ else int(D.iinfo(dt).max)


def random_(self, from_=0, to=None, *, generator=None):
    dt = self.dtype
    if dt.bare:
        bare_check("random", dt)
    if to is None and from_ == 0:
        wide = dt.name in ("float64", "int64")
        return _fill_random(self, S.random_full, _random_max(dt) + 1, wide, generator=generator)
    span = (_random_max(dt) + 1 if to is None else to) - from_
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return _fill_random(self, S.random_from_to, from_, span, dt.name in _WIDE_DRAWS,
                        generator=generator)


def exponential_(self, lambd=1.0, *, generator=None):
    return _fill_random(self, S.exponential, lambd, generator=generator)


def geometric_(self, p, *, generator=None):
    return _fill_random(self, S.geometric, p, generator=generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    return _fill_random(self, S.log_normal, mean, std, generator=generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    return _fill_random(self, S.cauchy, median, sigma, generator=generator)


# -- index grids --------------------------------------------------------------------------------
