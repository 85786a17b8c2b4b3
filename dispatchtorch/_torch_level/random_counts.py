"""torch.poisson and torch.binomial over ops.random_counts' samplers (ATen's, draw for
draw), with ATen's argument checks and derivatives: poisson's gradient is zero,
binomial's backward raises, as PyTorch's ("derivative ... is not implemented")."""
from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.function import Function
from ..ops._out import takes_out
from ..ops.random import Generator
from ..ops.random_counts import binomial_sample, poisson_sample

_POISSON_DTYPES = (D.float16, D.bfloat16, D.float32, D.float64)


class _Poisson(Function):
    @staticmethod
    def forward(ctx, rates, generator):
        return poisson_sample(rates, generator)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class _Binomial(Function):
    @staticmethod
    def forward(ctx, count, prob, generator):
        return binomial_sample(count, prob, generator)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::binomial is not implemented")


def _check_generator(fn, pos, generator):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' (position {pos}) must be torch.Generator, "
                        f"not {type(generator).__name__}")


def _finite_host(t):
    return t.numel() == 0 or bool(t.detach().isfinite().all())


@takes_out("poisson", "exact")
def poisson(input, generator=None):
    """Poisson counts with the rates `input` (floating, non-negative, finite)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _check_generator("poisson", 2, generator)
    if input.dtype not in _POISSON_DTYPES:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{input.dtype.pt_name}'")
    if input._place.type != "meta":
        if input.numel() and not bool((input.detach() >= 0).all()):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        if not _finite_host(input):
            raise RuntimeError("poisson: an infinite rate has no defined result (ATen's "
                               "sampler casts an infinite draw to int64)")
    return _Poisson.apply(input, generator)


@takes_out("binomial", "exact")
def binomial(count, prob, generator=None):
    """Binomial counts of `count` trials (finite) with success probability `prob` (one
    dtype, float32 or float64; prob broadcast to count's shape)."""
    for pos, (name, t) in enumerate((("count", count), ("prob", prob)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    _check_generator("binomial", 3, generator)
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{t.dtype.pt_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.pt_name} but expected "
                           f"{count.dtype.pt_name}")
    if count.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for "
                                  f"'{count.dtype.pt_name}'")
    if count._place.type != "meta" and not _finite_host(count):
        raise RuntimeError("binomial: count must be finite (ATen's sampler never returns "
                           "for a NaN count and has no defined result for an infinite one)")
    return _Binomial.apply(count, prob.expand(count.shape), generator)


def thread_safe_generator():
    """None: the DataLoader here has no thread workers, and in the main process and in
    process workers PyTorch's also returns None (the default generator is used)."""
    return None


PUBLIC = {"poisson": poisson, "binomial": binomial, "thread_safe_generator": thread_safe_generator}
