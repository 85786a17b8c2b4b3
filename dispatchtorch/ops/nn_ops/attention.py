"""The nn rows of scaled_dot_product_attention."""
from __future__ import annotations

from ... import _dtype as D
from ..._place import place_of
from ...autograd.grad_mode import STATE
from ._row import Composite
from .softmax import _softmax


# -- attention -------------------------------------------------------------------------------------

_CAUSAL: dict = {}


def causal_mask(L, S, device):
    """The (L, S) bool mask of allowed positions (j <= i), cached per size and device."""
    key = (L, S, str(device))
    m = _CAUSAL.get(key)
    if m is None or m._place is not place_of(device):   # a reloaded backend: a new place
        m = creation.arange(L, device=device).unsqueeze(1) >= creation.arange(S, device=device)
        if len(_CAUSAL) < 64:
            _CAUSAL[key] = m
    return m


def _scores(q, k, attn_mask, is_causal, scale):
    s = (q @ k.mT).mul_(scale) if not (STATE.enabled and (q._rg or k._rg)) else (q @ k.mT) * scale
    if is_causal:
        s = pointwise.where(causal_mask(q._shape[-2], k._shape[-2], q.device), s, float("-inf"))
    if attn_mask is not None:
        if attn_mask._dtype is D.bool_:
            s = pointwise.where(attn_mask, s, float("-inf"))
        else:
            s = s + attn_mask
    return s


def opened(attn_mask, is_causal, L, S, device):
    """(the mask with each entirely masked row opened, those rows as a bool (..., L, 1)),
    or (None, None) without a mask. PyTorch's SDPA gives 0 on such a row (its
    _safe_softmax), where a softmax of all -inf is NaN; opening the row keeps its softmax
    finite, and the caller zeroes its output (and its incoming gradient). The rows are
    found from the mask, which is usually far smaller than the scores; without a mask
    none exists (a causal row sees at least its first key)."""
    if attn_mask is None:
        return None, None
    is_bool = attn_mask._dtype is D.bool_
    allowed = attn_mask if is_bool else attn_mask != float("-inf")
    if is_causal:
        allowed = allowed & causal_mask(L, S, device)
    dead = ~allowed.any(-1, keepdim=True)
    return (attn_mask | dead if is_bool else pointwise.where(dead, 0.0, attn_mask)), dead


def _sdpa(q, k, v, attn_mask, is_causal, scale):
    mask, dead = opened(attn_mask, is_causal, q._shape[-2], k._shape[-2], q.device)
    out = _softmax(_scores(q, k, mask, is_causal, scale), -1) @ v
    return out if dead is None else pointwise.where(dead, 0.0, out)


def _sdpa_grad(g, q, k, v, attn_mask, is_causal, scale, needs):
    mask, dead = opened(attn_mask, is_causal, q._shape[-2], k._shape[-2], q.device)
    if dead is not None:
        g = pointwise.where(dead, 0.0, g)
    p = _softmax(_scores(q, k, mask, is_causal, scale), -1)
    gv = p.mT @ g if needs[2] else None
    gp = g @ v.mT
    gs = p * (gp - (gp * p).sum(-1, keepdim=True))
    gq = (gs @ k) * scale if needs[0] else None
    gk = (gs.mT @ q) * scale if needs[1] else None
    gm = gs if needs[3] else None
    return gq, gk, gv, gm


SDPA = Composite("scaled_dot_product_attention", ("q", "k", "v", "attn_mask"), _sdpa, _sdpa_grad,
                 lambda q, k, v, m, **kw: ((q._shape[:-1] + (v._shape[-1],), q._dtype),),
                 "scaled_dot_product_attention(q, k, v, attn_mask, *, is_causal, scale)",
                 "softmax(q @ k^T * scale + mask) @ v; a bool mask marks allowed positions")


# The op modules this one's derivative rules and decompositions call (at run time only).
from .. import creation, pointwise  # noqa: E402
