"""The nn rows of F.linear: x @ weight.T + bias."""
from __future__ import annotations

from ._row import Composite


# -- linear ------------------------------------------------------------------------------------------


def _linear(x, weight, bias):
    if x.dim() == 2:
        y = x @ weight.mT
    else:
        y = (x.reshape(-1, x._shape[-1]) @ weight.mT).reshape(x._shape[:-1] + (weight._shape[0],))
    return y if bias is None else y.add_(bias)


def _linear_grad(g, x, weight, needs):
    # weight is saved only for x's gradient and x only for weight's, as PyTorch's addmm
    g2 = g.reshape(-1, g._shape[-1])
    gx = gw = gb = None
    if needs[0]:
        gx = (g2 @ weight).reshape(g._shape[:-1] + (weight._shape[1],))
    if needs[1]:
        gw = g2.mT @ x.reshape(-1, x._shape[-1])
    if needs[2]:
        gb = g2.sum(0)
    return gx, gw, gb


def _linear_meta(x, weight, bias):
    return ((x._shape[:-1] + (weight._shape[0],), x._dtype),)


LINEAR = Composite("linear", ("x", "weight", "bias"), _linear, _linear_grad, _linear_meta,
                   "linear(x, weight, bias)", "x @ weight.T + bias over the last dim of x",
                   save_for={"x": ("weight",), "weight": ("x",)})
