"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp of a Python function,
over the reverse-mode engine. There is no forward-mode AD here: jvp and hvp use the
double-backward trick, as PyTorch's own do, and `strategy="forward-mode"` (which PyTorch
allows only with vectorize=True) computes the same Jacobian in reverse mode.
`vectorize=True` runs one backward pass per row where PyTorch vmaps them: same values."""
from __future__ import annotations

from .. import ops as _ops
from .._tensor import Tensor
from .engine import grad as _engine_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


def _as_tuple(value, arg_name, fn_name):
    """(was it a tuple, the tensors as a tuple); PyTorch's TypeError for anything else."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _prepare(inputs, create_graph, need_graph):
    """Inputs the function is differentiated at: fresh leaves, or (create_graph) views that
    keep the caller's graph so the result can be differentiated again."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(results, create_graph):
    if create_graph:
        return results
    return tuple(_finish(r, False) if isinstance(r, tuple) else r.detach() for r in results)


def _unpack(res, outer, inner=None):
    """Undo _as_tuple on the way out: one level, or two (outputs x inputs)."""
    if inner is not None and not inner:
        res = tuple(el[0] for el in res)
    return res if outer else res[0]


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
                           if other_is_tuple else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            entry = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {b.shape} but got {a.shape}.")


def _scalar_only(v, tensors, what):
    if v is None and (len(tensors) != 1 or tensors[0].numel() != 1):
        raise RuntimeError(f"The vector v can only be None if {what} is a single Tensor with a "
                           f"single element.")


_STRICT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function "
                "with respect to input {i} is independent of the input. This is not allowed in strict "
                "mode. You should ensure that your function is twice differentiable and that the "
                "jacobian depends on the inputs (this would be violated by a linear function for example).",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}."
                               " This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that need a gradient; None for inputs nothing reaches."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return _engine_grad(outs, inputs, gouts, retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _ops.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _call(func, inputs, fn_name, strict):
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "vjp")[1], create_graph, False)
            _validate_v(v, outputs, outputs_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns "
                               "a single Tensor with a single element.")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict,
                             create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by differentiating the vjp with respect to its cotangent."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "jvp")[1], create_graph, False)
            _validate_v(v, inputs, inputs_tuple)
        else:
            _scalar_only(v, inputs, "the input to the user-provided function")
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        cotangents = tuple(_ops.zeros_like(o).requires_grad_(True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, cotangents, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_grad(grad_inputs, cotangents, v, create_graph), outputs, strict,
                             create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func / d inputs: one backward pass per output element. The result's shape is
    output.shape + input.shape, nested (outputs x inputs) as the arguments were."""
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
                             'If your function has more outputs than inputs, "forward-mode" tends to '
                             'be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). '
                                      'Please either set `create_graph=False` or '
                                      '`strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                               '`strategy="forward-mode"` are not supported together (yet). Please '
                               'either set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        rows = tuple(_jacobian_rows(i, out, inputs, create_graph, strict and not vectorize)
                     for i, out in enumerate(outputs))
    return _unpack(_finish(rows, create_graph), outputs_tuple, inputs_tuple)


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """Output i's Jacobian blocks, one per input."""
    cols = [[] for _ in inputs]
    flat = out.reshape(-1)
    for j in range(out.numel()):
        for k, (g, inp) in enumerate(zip(_grad((flat[j],), inputs, retain_graph=True,
                                               create_graph=create_graph), inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                       f"input {k}. This is not allowed in strict mode.")
                g = _ops.zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode when "
                                   f"create_graph=True.")
            cols[k].append(g)
    return tuple(_ops.stack(c).view(*out.shape, *inp.shape) if c
                 else _ops.zeros(*out.shape, *inp.shape, dtype=inp.dtype, device=inp.device)
                 for c, inp in zip(cols, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Jacobian of the gradient of a scalar function, nested (inputs x inputs)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*inp):
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain "
                               "a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, inputs_tuple, inputs_tuple)


def _scalar_function_gradient(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of vhp and hvp: prepared inputs and v, the output, its gradient (with graph)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        v = _prepare(_as_tuple(v, "v", fn_name)[1], create_graph, False)
        _validate_v(v, inputs, inputs_tuple)
    else:
        _scalar_only(v, inputs, "the input to the user-provided function")
    outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a "
                           f"single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph,
                             "double_back")
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v), by the double-backward trick: the vhp of a cotangent, differentiated
    with respect to that cotangent."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        cotangents = tuple(_ops.zeros_like(t).requires_grad_(True) for t in inputs)
        double_back = _grad(jac, inputs, cotangents, create_graph=True)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_grad(double_back, cotangents, v, create_graph), inputs, strict,
                             create_graph, "double_back_trick")
    return _finish(outputs, create_graph)[0], _unpack(_finish(res, create_graph), inputs_tuple)
