"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian over the reverse-mode engine.

Each transform differentiates at fresh leaves standing for its inputs (an input that
already requires grad is taken through a view, so an outer graph still reaches it).
Whether the results keep a graph is PyTorch's rule: when the transform is nested in
another (depth > 0) or the function reached a tensor that requires grad from outside
(the caller's input, a module's parameter), its results are differentiable; otherwise
they are plain tensors, as torch.func's are."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from .. import ops as _ops
from .._tensor import Tensor
from ..autograd.engine import grad as _engine_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]

_DEPTH = threading.local()


@contextmanager
def _nested():
    depth = getattr(_DEPTH, "n", 0)
    _DEPTH.n = depth + 1
    try:
        yield depth
    finally:
        _DEPTH.n = depth


def _argnums_tuple(argnums, n_args):
    """argnums as a tuple of non-negative ints, checked as PyTorch does."""
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in nums) or (many and not nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    return many, tuple(a % n_args for a in nums)


class _Lifted:
    """The arguments with the differentiated ones' tensors replaced by fresh leaves."""

    def __init__(self, args, nums):
        self.args, self.specs, self.inputs, self.fresh = list(args), [], [], set()
        for a in nums:
            leaves, spec = tree_flatten(args[a])
            lifted = [self._lift(x) for x in leaves]
            self.specs.append((spec, len(lifted)))
            self.inputs.extend(lifted)
            self.args[a] = tree_unflatten(lifted, spec)

    def _lift(self, x):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected the differentiated argument to hold only Tensors, got "
                               f"{type(x)}")
        if x.requires_grad:
            return x.view_as(x)
        leaf = x.detach().requires_grad_(True)
        self.fresh.add(id(leaf))
        return leaf

    def rebuild(self, flat, many):
        """Per-input results (one per lifted tensor) in the arguments' structure."""
        out, start = [], 0
        for spec, n in self.specs:
            out.append(tree_unflatten(list(flat[start:start + n]), spec))
            start += n
        return tuple(out) if many else out[0]


def _reaches_outside(outputs, fresh):
    """Does any output's graph reach a tensor requiring grad that is not one of ours?"""
    stack, seen = [], set()
    for o in outputs:
        if not isinstance(o, Tensor) or not o.requires_grad:
            continue
        if o.grad_fn is None:
            if id(o) not in fresh:
                return True
            continue
        stack.append(o.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for edge in getattr(node, "next", ()) or ():
            if edge is None:
                continue
            target = edge[0]
            if isinstance(target, Tensor):
                if id(target) not in fresh:
                    return True
            else:
                stack.append(target)
    return False


def _keeps_graph(depth, entry_grad_mode, outputs, lifted):
    return entry_grad_mode and (depth > 0 or _reaches_outside(outputs, lifted.fresh))


def _grads(outputs, inputs, cotangents, create_graph):
    """d(outputs . cotangents)/d inputs, zeros where nothing connects them."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if isinstance(o, Tensor) and o.requires_grad]
    found = (None,) * len(inputs)
    if pairs:
        outs, cts = zip(*pairs)
        found = _engine_grad(outs, inputs, cts, retain_graph=True, create_graph=create_graph,
                             allow_unused=True)
    return [_ops.zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _plain(tree, keep):
    if keep:
        return tree
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


def _tensor_outputs(func, args, kwargs, has_aux, api):
    """func's output (its leaves all tensors), aux, the leaves and the output's spec."""
    out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
    outs, out_spec = tree_flatten(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: Expected f to be a function that has only Tensor outputs, "
                               f"got {type(o)}")
    return out, aux, outs, out_spec


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (d func / d args[argnums], func(*args)) for a scalar func."""
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        many, nums = _argnums_tuple(argnums, len(args))
        entry = is_grad_enabled()
        with _nested() as depth, enable_grad():
            lifted = _Lifted(args, nums)
            out, aux = _split_aux(func(*lifted.args, **kwargs), has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {out.dim()} dims. Maybe you wanted to use the vjp or "
                                   f"jacrev APIs instead?")
            keep = _keeps_graph(depth, entry, [out], lifted)
            grads = lifted.rebuild(_grads([out], lifted.inputs, [None], keep), many)
        value = _plain(out, keep)
        if has_aux:
            return grads, (value, _plain(aux, keep))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning d func / d args[argnums] (and aux) for a scalar func."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) -> one gradient per primal."""
    entry = is_grad_enabled()
    with _nested() as depth, enable_grad():
        lifted = _Lifted(primals, range(len(primals)))
        out, aux, outs, out_spec = _tensor_outputs(func, lifted.args, {}, has_aux,
                                                   "vjp(f, *primals)")
        keep = _keeps_graph(depth, entry, outs, lifted)

    def vjp_fn(cotangents):
        try:
            cts = out_spec.flatten_up_to(cotangents)
        except ValueError:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: "
                               f"{tree_flatten(cotangents)[1]}, primal output: {out_spec}") from None
        for o, c in zip(outs, cts):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{getattr(c, 'shape', type(c))} and output[0] has a shape of "
                                   f"{o.shape}.")
        with enable_grad():
            flat = _grads(outs, lifted.inputs, cts, keep or any(c.requires_grad for c in cts))
        return lifted.rebuild(flat, True)

    result = (_plain(out, keep), vjp_fn)
    return result + (_plain(aux, keep),) if has_aux else result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents[, aux]) by differentiating a vjp in its cotangent."""
    api = "jvp(f, primals, tangents)"
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"{api}: Expected {name} to be a tuple. E.g. it should be valid to "
                               f"call f(*primals).")
    p_flat, p_spec = tree_flatten(primals)
    t_flat, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {p_spec} and tangents with "
                           f"structure {t_spec}")
    for p, t in zip(p_flat, t_flat):
        if p.shape != t.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                               f"that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(p.shape)} while the given forward gradient is of size "
                               f"{list(t.shape)}.")
    entry = is_grad_enabled()
    with _nested() as depth, enable_grad():
        lifted = _Lifted(primals, range(len(primals)))
        out, aux = _split_aux(func(*lifted.args), has_aux, api)
        outs, out_spec = tree_flatten(out)
        keep = _keeps_graph(depth, entry, outs, lifted)
        cots = [_ops.zeros_like(o).requires_grad_(True) for o in outs]
        back = _grads(outs, lifted.inputs, cots, create_graph=True)
        forward = _grads(back, cots, t_flat, create_graph=keep)
    result = (_plain(out, keep), tree_unflatten(_plain(forward, keep), out_spec))
    return result + (_plain(aux, keep),) if has_aux else result


def _jacobian_blocks(o, inputs, create_graph):
    """Output o's Jacobian with respect to each input: o.shape + input.shape."""
    rows = [[] for _ in inputs]
    flat = o.reshape(-1)
    for j in range(o.numel()):
        for col, g in zip(rows, _grads([flat[j]], inputs, [None], create_graph)):
            col.append(g)
    return [_ops.stack(col).view(*o.shape, *x.shape) if col
            else _ops.zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device)
            for col, x in zip(rows, inputs)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func with respect to args[argnums], nested as
    func's outputs (outer) and the arguments (inner), each block output.shape + input.shape.
    chunk_size changes nothing here (one backward pass per output element)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args, **kwargs):
        many, nums = _argnums_tuple(argnums, len(args))
        entry = is_grad_enabled()
        with _nested() as depth, enable_grad():
            lifted = _Lifted(args, nums)
            out, aux, outs, out_spec = _tensor_outputs(func, lifted.args, kwargs, has_aux,
                                                       "jacrev(f, ...)(*args)")
            keep = _keeps_graph(depth, entry, outs, lifted)
            jac = tree_unflatten([lifted.rebuild(_jacobian_blocks(o, lifted.inputs, keep), many)
                                  for o in outs], out_spec)
        jac = _plain(jac, keep)
        return (jac, _plain(aux, keep)) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """jacrev's Jacobian: there is no forward-mode AD here, and the values are the same."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)
