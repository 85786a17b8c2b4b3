"""gradcheck / gradgradcheck: analytical gradients against central finite differences."""
from __future__ import annotations

import itertools

import numpy as np

from .._tensor import Tensor
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_inputs(inputs):
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)
            and o.dtype.is_floating_point]


def _numerical(func, inputs, i, eps):
    """Jacobian columns by central differences, perturbing inputs[i] in place."""
    x = inputs[i]
    cols = []
    def evaluate():
        with enable_grad():     # func may itself differentiate (gradgradcheck)
            return [o.detach().double().numpy(force=True).ravel().copy()
                    for o in _outputs(func, inputs)]

    for idx in itertools.product(*(range(n) for n in x.shape)) if x.dim() else [()]:
        with no_grad():
            orig = x[idx].item()
            x[idx] = orig + eps
        plus = evaluate()
        with no_grad():
            x[idx] = orig - eps
        minus = evaluate()
        with no_grad():
            x[idx] = orig
        cols.append(np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
                    if plus else np.zeros(0))
    if not cols:        # an empty input: no columns, one row per output element
        return np.zeros((sum(o.size for o in evaluate()), 0))
    return np.stack(cols, axis=1)


def _analytical(func, inputs, i):
    """Jacobian rows by one backward pass per output element."""
    from .engine import grad
    with enable_grad():
        outs = _outputs(func, inputs)
    rows = []
    for o in outs:
        flat = o.reshape(-1)
        for j in range(flat.numel()):
            seed = flat.detach().clone()
            seed.zero_()
            seed[j] = 1.0
            g, = grad(o, inputs[i], seed.reshape(o.shape), retain_graph=True, allow_unused=True)
            rows.append(np.zeros(inputs[i].numel()) if g is None else
                        g.detach().double().numpy(force=True).ravel().copy())
    return np.stack(rows, axis=0) if rows else np.zeros((0, inputs[i].numel()))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **ignored):
    """True if d(func)/d(inputs) from backward matches finite differences."""
    inputs = _as_tuple(inputs)
    for i in _diff_inputs(inputs):
        x = inputs[i]
        if x.dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          f"point. gradcheck may fail because of finite-difference error.",
                          UserWarning, stacklevel=2)
        num = _numerical(func, inputs, i, eps)
        ana = _analytical(func, inputs, i)
        if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            err = np.max(np.abs(ana - num)) if num.shape == ana.shape else "shape mismatch"
            raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                 f"numerical:{num}\nanalytical:{ana}\nmax abs difference: {err}")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **ignored):
    """gradcheck of the gradient itself: second derivatives, and linearity in grad_outputs."""
    from .. import ops
    from .engine import grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with enable_grad():
            outs = _outputs(func, inputs)
        gen = np.random.default_rng(0)
        grad_outputs = tuple(ops.tensor(gen.standard_normal(o.shape), dtype=o.dtype,
                                        device=o.device, requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff = _diff_inputs(inputs)

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _outputs(func, ins)
        gs = grad(outs, [ins[i] for i in diff], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
