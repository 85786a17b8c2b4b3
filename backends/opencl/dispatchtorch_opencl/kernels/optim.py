"""The fused optimizer rows (`_fused_adam_`, `_fused_sgd_`): one generated kernel
launch per group of contiguous tensors (multi_tensor.py), else per tensor.

The rows' decomposition is a dozen in-place ops per parameter, each its own launch
(and on PoCL its own pass over memory); here one loop kernel (codegen.loop_kernel:
any strides, coalesced) reads the parameter, its gradient and its state once and
writes them once. The arithmetic is the CPU kernel's (optim_kernels.py), operation for
operation in the compute type: lerp for the first moment, addcmul for the second,
addcdiv for the update; float16/bfloat16 are computed in float32 and rounded once.
The step counts are the 0-d CPU tensors PyTorch keeps, incremented on the host.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .. import cltypes as T
from ..codegen import Operand, kernel_name, loop_kernel, loop_launch
from . import multi_tensor as MT

_ADAM_SCALARS = ("step_size", "bc2_sqrt", "w1", "w2", "beta2", "eps", "wd", "decay")
_SGD_SCALARS = ("lr", "wd", "momentum", "damp")


def _scalar_params(dt, names):
    c = T.COMPUTE[dt]
    np_type = np.float64 if c == "double" else np.float32
    return [(c, name, np_type) for name in names]


def _load_grad_and_param(dt, c, ix, maximize):
    """The statements every update body starts with: g (negated to maximize) and p."""
    s = [f"{c} g = {T.load(dt, 'p_g', ix['g'])};"]
    if maximize:
        s.append("g = -g;")
    s.append(f"{c} p = {T.load(dt, 'p_p', ix['p'])};")
    return s


def _adam_body(dt, maximize, decay, amsgrad):
    c = T.COMPUTE[dt]

    def body(ix):
        s = _load_grad_and_param(dt, c, ix, maximize)
        if decay == "decoupled":
            s.append("p = p * decay;")
        elif decay == "l2":
            s.append("g = g + p * wd;")
        s.append(f"{c} m = {T.load(dt, 'p_m', ix['m'])}; m = m + (g - m) * w1;")
        s.append(f"{c} v = {T.load(dt, 'p_v', ix['v'])}; v = v * beta2 + (g * w2) * g;")
        s.append(T.store(dt, "p_m", ix["m"], "m"))
        s.append(T.store(dt, "p_v", ix["v"], "v"))
        if amsgrad:               # numpy's maximum: NaN from either side
            s.append(f"{c} vm = {T.load(dt, 'p_vm', ix['vm'])}; "
                     "vm = (vm >= v || vm != vm) ? vm : v;")
            s.append(T.store(dt, "p_vm", ix["vm"], "vm"))
            s.append(f"{c} sec = vm;")
        else:
            s.append(f"{c} sec = v;")
        # the preamble's builtin sqrt: inlined and vectorised (PoCL calls sqrt() out of line)
        root = "DT_SQRT" if c == "double" else "DT_SQRTF"
        s.append(f"p = p + (m * -step_size) / ({root}(sec) / bc2_sqrt + eps);")
        s.append(T.store(dt, "p_p", ix["p"], "p"))
        return "{ " + " ".join(s) + " }"
    return body


def _adam_spec(dt, maximize, decay, amsgrad, D, kinds):
    names = ("p", "g", "m", "v") + (("vm",) if amsgrad else ())
    ops = [Operand(n, dt, const=(n == "g")) for n in names]
    return loop_kernel(kernel_name("adam", dt, int(maximize), decay, int(amsgrad), D, *kinds),
                       ops, kinds, D, _adam_body(dt, maximize, decay, amsgrad),
                       params=_scalar_params(dt, _ADAM_SCALARS), dtypes=(dt,),
                       what=f"_fused_adam_ ({dt})")


def _steps(state_steps):
    out = []
    for s in state_steps:
        if not isinstance(s, np.ndarray):
            raise TypeError("_fused_adam_: state_steps must be CPU tensors (0-d float32, as "
                            f"PyTorch keeps them), got one on {getattr(s, 'dev', s)!r}")
        s += 1
        out.append(float(s))
    return out


def fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr,
                beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize):
    decay = ("decoupled" if decoupled else "l2") if weight_decay else "none"
    lists = [params, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    names = ("p", "g", "m", "v") + (("vm",) if amsgrad else ())
    steps = _steps(state_steps)

    def scalars(step):
        return (lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5, 1 - beta1, 1 - beta2,
                beta2, eps, weight_decay, 1 - lr * weight_decay)
    runs, rest = _multi_runs(lists, steps)
    for run in runs:
        dt = params[run[0]].dtype
        MT.launch(params[run[0]].dev, ("optim", "madam", dt, maximize, decay, amsgrad),
                  lambda count: MT.multi_spec(
                      kernel_name("madam", dt, int(maximize), decay, int(amsgrad)), dt, names,
                      ("g",), _scalar_params(dt, _ADAM_SCALARS),
                      _adam_body(dt, maximize, decay, amsgrad), count, f"_fused_adam_ ({dt})"),
                  lists, run, scalars(steps[run[0]]))
    for i in rest:
        p, dt = params[i], params[i].dtype
        group = [lst[i] for lst in lists]
        fkey = ("optim", "adam", dt, maximize, decay, amsgrad)
        loop_launch(p.dev, fkey, partial(_adam_spec, dt, maximize, decay, amsgrad), p.shape,
                    [(h, h.strides) for h in group], params=scalars(steps[i]), cost=8)


def _multi_runs(lists, steps=None):
    """MT.groups, split further where the step counts (Adam's scalars) differ."""
    runs, rest = MT.groups(lists)
    if steps is None:
        return runs, rest
    out = []
    for run in runs:
        cur = [run[0]]
        for i in run[1:]:
            if steps[i] == steps[cur[0]]:
                cur.append(i)
            else:
                out.append(cur)
                cur = [i]
        out.append(cur)
    return out, rest


def _sgd_body(dt, maximize, l2, momentum, dampened, nesterov):
    c = T.COMPUTE[dt]

    def body(ix):
        s = _load_grad_and_param(dt, c, ix, maximize)
        if l2:
            s.append("g = g + p * wd;")
        if momentum:
            s.append(f"{c} b = {T.load(dt, 'p_b', ix['b'])}; b = b * momentum + "
                     f"{'g * damp' if dampened else 'g'};")
            s.append(T.store(dt, "p_b", ix["b"], "b"))
            s.append("g = g + b * momentum;" if nesterov else "g = b;")
        s.append("p = p + g * -lr;")
        s.append(T.store(dt, "p_p", ix["p"], "p"))
        return "{ " + " ".join(s) + " }"
    return body


def _sgd_spec(dt, flags, D, kinds):
    names = ("p", "g") + (("b",) if flags[2] else ())
    ops = [Operand(n, dt, const=(n == "g")) for n in names]
    return loop_kernel(kernel_name("sgd", dt, *map(int, flags), D, *kinds), ops, kinds, D,
                       _sgd_body(dt, *flags), params=_scalar_params(dt, _SGD_SCALARS),
                       dtypes=(dt,), what=f"_fused_sgd_ ({dt})")


def fused_sgd_(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay,
               nesterov, maximize):
    flags = (bool(maximize), bool(weight_decay), bool(momentum), dampening != 0,
             bool(nesterov))
    scalars = (lr, weight_decay, momentum, 1 - dampening)
    lists = [params, grads] + ([momentum_buffers] if momentum else [])
    names = ("p", "g") + (("b",) if momentum else ())
    runs, rest = _multi_runs(lists)
    for run in runs:
        dt = params[run[0]].dtype
        MT.launch(params[run[0]].dev, ("optim", "msgd", dt, flags),
                  lambda count: MT.multi_spec(kernel_name("msgd", dt, *map(int, flags)), dt, names,
                                              ("g",), _scalar_params(dt, _SGD_SCALARS),
                                              _sgd_body(dt, *flags), count, f"_fused_sgd_ ({dt})"),
                  lists, run, scalars)
    for i in rest:
        p = params[i]
        group = [lst[i] for lst in lists]
        loop_launch(p.dev, ("optim", "sgd", p.dtype, flags), partial(_sgd_spec, p.dtype, flags),
                    p.shape, [(h, h.strides) for h in group], params=scalars, cost=4)


KERNELS = {"_fused_adam_": fused_adam_, "_fused_sgd_": fused_sgd_}
