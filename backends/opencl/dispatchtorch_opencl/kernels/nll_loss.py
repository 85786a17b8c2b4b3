"""nll_loss's row as one launch (the decomposition is nine: ne, where, a cast,
gather, mul, neg, two sums, div). Per target element n, as the decomposition:
w = (t != ignore_index) [* weight[safe]], loss = -(x[n, safe] * w) with safe = t or 0
when ignored; 'none' writes the losses, 'sum'/'mean' are one work-item's running
sums (sum(loss), and / sum(w) for 'mean') up to SERIAL elements, else the losses and
weights go through the sum kernel. The frontend checked the class range and keeps
the row's derivative rule (forward only here). float16/bfloat16 in float32,
rounded once.

nll_loss_backward's row (its decomposition is eleven launches: ne, where, a cast, a sum
and a division for 'mean', mul, neg, where, zeros, scatter) is one launch as well: per
target element, the class row of the output zeroed and -(w * g (/ sum(w))) put at the
target's class (+0.0 when ignored). 'mean' sums the weights in each work-item when
there are up to SERIAL targets (compensated: the weights of 65536 targets lose at
most an ulp or two), else through the forward's "parts" launch and the sum kernel.
"""
from __future__ import annotations

from math import prod

import numpy as np

from .. import cltypes as T
from ..codegen import KernelSpec, coords, dot, kernel_name, signature
from ..handle import CLArray, coalesce, contiguous_strides
from .elementwise import KERNELS as _ELEMENTWISE
from .reduction import KERNELS as _REDUCTION

I64 = np.int64
SERIAL = 1 << 16
MODES = ("none", "total", "parts")     # per element / one running sum / losses + weights


def nll_spec(dt, tdt, dk, weighted, mode):
    c = T.COMPUTE[dt]
    params = [(T.pointer(dt, True), "p_x", None), ("long", "o_x", I64),
              (T.pointer(tdt, True), "p_t", None), ("long", "o_t", I64)]
    if weighted:
        params += [(T.pointer(dt, True), "p_w", None), ("long", "o_w", I64), ("long", "sw", I64)]
    params += [("long", f"ks{d}", I64) for d in range(dk)]
    params += [("long", f"kx{d}", I64) for d in range(dk)]
    params += [("long", f"kt{d}", I64) for d in range(dk)]
    params += [("long", n, I64) for n in ("cx", "ignore", "total", "chunk", "mean")]
    params.append((T.pointer(dt), "p_out", None))
    if mode == "parts":
        params.append((T.pointer(dt), "p_wout", None))
    sig, types = signature(params)
    weight = f"{T.load(dt, 'p_w', 'o_w + safe * sw')} * ({c})valid" if weighted else f"({c})valid"
    body = ["long first = get_global_id(0) * chunk, last = first + chunk;",
            "if (last > total) last = total;",
            f"{c} acc = 0, wacc = 0;",
            "for (long n = first; n < last; n++) {",
            "  " + coords("n", [f"ks{d}" for d in range(dk)], "k"),
            f"  long t = (long)({T.load(tdt, 'p_t', 'o_t + ' + dot('k', [f'kt{d}' for d in range(dk)]))});",
            "  long valid = t != ignore, safe = valid ? t : 0;",
            f"  {c} w = {weight};",
            f"  {c} loss = -({T.load(dt, 'p_x', 'o_x + ' + dot('k', [f'kx{d}' for d in range(dk)]) + ' + safe * cx')} * w);"]
    if mode == "none":
        body.append("  " + T.store(dt, "p_out", "n", "loss"))
    elif mode == "parts":
        body += ["  " + T.store(dt, "p_out", "n", "loss"), "  " + T.store(dt, "p_wout", "n", "w")]
    else:
        body.append("  acc = acc + loss; wacc = wacc + w;")
    body.append("}")
    if mode == "total":
        body.append(T.store(dt, "p_out", "0", "mean ? acc / wacc : acc"))
    name = kernel_name("nll", dt, tdt, dk, int(weighted), mode)
    src = (T.preamble((dt, tdt)) + f"\n__kernel void {name}({sig}) {{\n  "
           + "\n  ".join(body) + "\n}\n")
    return KernelSpec(name, src, types, f"nll_loss ({dt})")


def _launch(out, x, target, weight, ignore_index, mode, mean, wout=None):
    dev = out.dev
    cdim = 1 if len(x.shape) > 1 else 0
    xk = tuple(s for d, s in enumerate(x.strides) if d != cdim)
    kshape, (kx, kt) = coalesce(tuple(target.shape), [xk, tuple(target.strides)])
    total = prod(target.shape)
    dk = len(kshape)
    weighted = weight is not None
    dt, tdt = out.dtype, target.dtype
    kernel, what = dev.kernel(("nll", dt, tdt, dk, weighted, mode),
                              lambda: nll_spec(dt, tdt, dk, weighted, mode))
    if mode == "total":
        gsize, lsize, chunk = (1,), (1,), max(1, total)
    else:
        _, chunk, gsize, lsize = dev.split(total, per_item_cost=4, chunked=True)
    args = [x.buf, x.offset, target.buf, target.offset]
    if weighted:
        args += [weight.buf, weight.offset, weight.strides[0]]
    args += [*kshape, *kx, *kt, x.strides[cdim], ignore_index, total, chunk, int(mean), out.buf]
    if wout is not None:
        args.append(wout.buf)
    dev.launch(kernel, gsize, lsize, args, what)


def _temp(dev, shape, dt):
    return CLArray(dev.alloc(prod(shape) * T.ITEMSIZE[dt]), dev, dt, shape,
                   contiguous_strides(shape), 0)


def nll_loss(out, x, target, weight, *, reduction, ignore_index):
    if reduction == "none":
        if out.size:
            _launch(out, x, target, weight, ignore_index, "none", False)
        return
    mean = reduction == "mean"
    total = prod(target.shape)
    if total <= SERIAL:
        _launch(out, x, target, weight, ignore_index, "total", mean)
        return
    dev, dt = out.dev, out.dtype
    losses, ws = _temp(dev, target.shape, dt), _temp(dev, target.shape, dt)
    _launch(losses, x, target, weight, ignore_index, "parts", mean, ws)
    dims = tuple(range(len(target.shape)))
    _REDUCTION["sum"](out, losses, dims=dims, keepdim=False)
    if mean:
        wsum = _temp(dev, (), dt)
        _REDUCTION["sum"](wsum, ws, dims=dims, keepdim=False)
        _ELEMENTWISE["div"](out, out, wsum)


def nll_backward_spec(dt, tdt, dk, weighted, gmode):
    """gmode: "each" (reduction 'none': g per target), "scalar" ('sum'), "mean_serial"
    (each work-item sums the weights), "mean_given" (the weights' sum in p_ws)."""
    c = T.COMPUTE[dt]
    params = [(T.pointer(dt, True), "p_g", None), ("long", "o_g", I64),
              (T.pointer(tdt, True), "p_t", None), ("long", "o_t", I64)]
    if weighted:
        params += [(T.pointer(dt, True), "p_w", None), ("long", "o_w", I64), ("long", "sw", I64)]
    if gmode == "mean_given":
        params += [(T.pointer(dt, True), "p_ws", None), ("long", "o_ws", I64)]
    params += [("long", f"ks{d}", I64) for d in range(dk)]
    params += [("long", f"k{a}{d}", I64) for a in "gto" for d in range(dk)]
    params += [("long", n, I64) for n in ("C", "co", "ignore", "total", "chunk", "o_out")]
    params.append((T.pointer(dt), "p_out", None))
    sig, types = signature(params)

    def weight_of(t):
        return (f"({T.load(dt, 'p_w', f'o_w + ({t} != ignore ? {t} : 0) * sw')} * ({c})({t} != ignore))"
                if weighted else f"({c})({t} != ignore)")

    def target_at(n):
        return [f"  {{ {coords(n, [f'ks{d}' for d in range(dk)], 'q')}",
                f"    long t = (long)({T.load(tdt, 'p_t', 'o_t + ' + dot('q', [f'kt{d}' for d in range(dk)]))});"]

    g = "g"
    body = ["long first = get_global_id(0) * chunk, last = first + chunk;",
            "if (last > total) last = total;"]
    if gmode == "mean_serial":          # Kahan: sum(w) of up to SERIAL targets
        body += [f"{c} wsum = 0, comp = 0;", "for (long n = 0; n < total; n++) {",
                 *target_at("n"),
                 f"    {c} y = {weight_of('t')} - comp, u = wsum + y;",
                 "    comp = (u - wsum) - y; wsum = u; }", "}"]
    elif gmode == "mean_given":
        body.append(f"{c} wsum = {T.load(dt, 'p_ws', 'o_ws')};")
    if gmode != "each":
        body.append(f"{c} g = {T.load(dt, 'p_g', 'o_g')};")
        if gmode.startswith("mean"):
            body.append("g = g / wsum;")
    body += ["for (long n = first; n < last; n++) {",
             "  " + coords("n", [f"ks{d}" for d in range(dk)], "k"),
             f"  long t = (long)({T.load(tdt, 'p_t', 'o_t + ' + dot('k', [f'kt{d}' for d in range(dk)]))});",
             "  long valid = t != ignore, safe = valid ? t : 0;",
             f"  long ob = o_out + {dot('k', [f'ko{d}' for d in range(dk)])};"]
    if gmode == "each":
        body.append(f"  {c} g = {T.load(dt, 'p_g', 'o_g + ' + dot('k', [f'kg{d}' for d in range(dk)]))};")
    body += [f"  {c} coef = valid ? -({weight_of('t')} * {g}) : ({c})0;",
             f"  for (long j = 0; j < C; j++) {T.store(dt, 'p_out', 'ob + j * co', f'({c})0')}",
             "  " + T.store(dt, "p_out", "ob + safe * co", "coef"),
             "}"]
    name = kernel_name("nllbw", dt, tdt, dk, int(weighted), gmode)
    src = (T.preamble((dt, tdt)) + "#pragma OPENCL FP_CONTRACT OFF\n"
           + f"\n__kernel void {name}({sig}) {{\n  " + "\n  ".join(body) + "\n}\n")
    return KernelSpec(name, src, types, f"nll_loss_backward ({dt})")


def nll_loss_backward(out, g, x, target, weight, *, reduction, ignore_index):
    if out.size == 0:
        return
    dev, dt, tdt = out.dev, out.dtype, target.dtype
    cdim = 1 if len(out.shape) > 1 else 0
    drop = lambda st: tuple(s for d, s in enumerate(st) if d != cdim)     # noqa: E731
    gst = tuple(g.strides) if reduction == "none" else (0,) * len(target.shape)
    kshape, (kg, kt, ko) = coalesce(tuple(target.shape),
                                    [gst, tuple(target.strides), drop(out.strides)])
    total, dk, weighted = prod(target.shape), len(kshape), weight is not None
    gmode = {"none": "each", "sum": "scalar"}.get(reduction) or \
        ("mean_serial" if total <= SERIAL else "mean_given")
    kernel, what = dev.kernel(("nllbw", dt, tdt, dk, weighted, gmode),
                              lambda: nll_backward_spec(dt, tdt, dk, weighted, gmode))
    args = [g.buf, g.offset, target.buf, target.offset]
    if weighted:
        args += [weight.buf, weight.offset, weight.strides[0]]
    if gmode == "mean_given":
        losses, ws = _temp(dev, target.shape, dt), _temp(dev, target.shape, dt)
        _launch(losses, x, target, weight, ignore_index, "parts", True, ws)
        wsum = _temp(dev, (), dt)
        _REDUCTION["sum"](wsum, ws, dims=tuple(range(len(target.shape))), keepdim=False)
        args += [wsum.buf, wsum.offset]
    _, chunk, gsize, lsize = dev.split(total, per_item_cost=4 + out.shape[cdim], chunked=True)
    args += [*kshape, *kg, *kt, *ko, out.shape[cdim], out.strides[cdim], ignore_index, total,
             chunk, out.offset, out.buf]
    dev.launch(kernel, gsize, lsize, args, what)


KERNELS = {"nll_loss": nll_loss, "nll_loss_backward": nll_loss_backward}
