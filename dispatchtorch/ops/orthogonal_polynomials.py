"""torch.special's orthogonal polynomials (Chebyshev T/U/V/W and their shifted forms,
Hermite H/He, Laguerre, Legendre): p_n(x) by the three-term recurrence, written in public
ops. n is truncated to an integer, as PyTorch's kernels do; p_n = 0 for n < 0. PyTorch
defines no derivative for them, so neither do we."""
from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._elementwise import result_type
from ._out import takes_out


def _as_tensors(x, n, name):
    if not isinstance(x, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{name}(): expected a Tensor for input or n")
    ref = x if isinstance(x, Tensor) else n
    dt = result_type(x, n)
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    x = x.to(dt) if isinstance(x, Tensor) else creation.full((), x, dtype=dt, device=ref.device)
    n = n if isinstance(n, Tensor) else creation.full((), n, dtype=dt, device=ref.device)
    return x, n.to(dt).trunc()


def _recurrence(name, first, step, shift=False):
    @takes_out(name)
    def fn(input, n):
        x, n = _as_tensors(input, n, name)
        if shift:
            x = 2 * x - 1
        with no_grad():
            top = int(n.amax()) if n.numel() else 0
            p0 = creation.ones_like(x)
            p1 = first(x)
            r = pointwise.where(n == 0, p0, 0.0 * x)
            for k in range(1, top + 1):
                r = pointwise.where(n == k, p1, r)
                p0, p1 = p1, step(k, x, p1, p0)
        return r
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}(input, n) by its three-term recurrence."
    return fn


def _cheb(k, x, p, q):
    return 2 * x * p - q


POLYNOMIALS = {
    "chebyshev_polynomial_t": (lambda x: x, _cheb, False),
    "chebyshev_polynomial_u": (lambda x: 2 * x, _cheb, False),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, _cheb, False),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, _cheb, False),
    "shifted_chebyshev_polynomial_t": (lambda x: x, _cheb, True),
    "shifted_chebyshev_polynomial_u": (lambda x: 2 * x, _cheb, True),
    "shifted_chebyshev_polynomial_v": (lambda x: 2 * x - 1, _cheb, True),
    "shifted_chebyshev_polynomial_w": (lambda x: 2 * x + 1, _cheb, True),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q, False),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q, False),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1), False),
    "legendre_polynomial_p": (lambda x: x,
                              lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1), False),
}
SPECIAL = {name: _recurrence(name, first, step, shift)
           for name, (first, step, shift) in POLYNOMIALS.items()}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import creation, pointwise  # noqa: E402
