"""The nn rows of embedding and dropout (a mask times a scale)."""
from __future__ import annotations

from ...autograd.grad_mode import STATE
from ._row import Composite


# -- embedding, dropout --------------------------------------------------------------------------


def _embedding(weight, indices, padding_idx, num_weights):
    flat = indices.reshape(-1)
    return weight.index_select(0, flat).reshape(indices._shape + (weight._shape[1],))


def _embedding_grad(g, indices, padding_idx, num_weights):
    dim = g._shape[-1]
    flat = indices.reshape(-1)
    g2 = g.reshape(-1, dim)
    if padding_idx is not None:
        g2 = g2 * (flat != padding_idx).unsqueeze(1)
    gw = creation.zeros((num_weights, dim), dtype=g._dtype, device=g.device)
    return gw.index_add(0, flat, g2), None


EMBEDDING = Composite("embedding", ("weight", "indices"), _embedding, _embedding_grad,
                      lambda weight, indices, **k: ((indices._shape + (weight._shape[1],),
                                                     weight._dtype),),
                      "embedding(weight, indices, *, padding_idx, num_weights)",
                      "rows of weight; the padding_idx row gets no gradient")


def _dropout(x, mask, scale):
    return (x * mask).mul_(scale)


def _dropout_grad(g, mask, scale):
    if not STATE.enabled:         # no graph records the backward: the row's own kernel
        return DROPOUT(g, mask, scale=scale), None
    return g * mask * scale, None


DROPOUT = Composite("dropout", ("x", "mask"), _dropout, _dropout_grad,
                    lambda x, mask, **_: ((x._shape, x._dtype),),
                    "dropout(x, mask: bool, *, scale)",
                    "x * mask * scale; the frontend draws the keep-mask (same numbers on "
                    "every backend)")


# The op modules this one's derivative rules and decompositions call (at run time only).
from .. import creation  # noqa: E402
