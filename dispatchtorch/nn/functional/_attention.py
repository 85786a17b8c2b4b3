"""Scaled dot-product attention and the multi-head attention forward."""
from __future__ import annotations

import math

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor
from ..attention._sdp_flags import SDP as _sdp
from ..attention.bias import CausalBias
from ...ops import nn_ops as N
from ._activation import softmax
from ._linear import dropout, linear


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    if not _sdp["math"] and not _sdp["flash"]:          # nn.attention.sdpa_kernel's choice
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    if isinstance(attn_mask, CausalBias):
        return attn_mask.attention(scaled_dot_product_attention, query, key, value, dropout_p,
                                   is_causal, scale, enable_gqa)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor) or t.dim() < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must be a tensor of at least "
                               f"2 dims (..., L, E)")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: shapes do not match: query "
                           f"{list(query.shape)}, key {list(key.shape)}, value {list(value.shape)}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.unsqueeze(-3).expand(*key.shape[:-2], rep, *key.shape[-2:]).flatten(-4, -3)
        value = value.unsqueeze(-3).expand(*value.shape[:-2], rep, *value.shape[-2:]) \
            .flatten(-4, -3)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if attn_mask is not None and attn_mask.dtype is not D.bool_ and attn_mask.dtype is not query.dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, "
                           f"got {attn_mask.dtype}")
    if dropout_p <= 0.0:
        return N.SDPA(query, key, value, attn_mask, is_causal=bool(is_causal), scale=scale)
    L, S = query.shape[-2], key.shape[-2]
    attn_mask, dead = N.attention.opened(attn_mask, is_causal, L, S, query.device)
    s = (query @ key.mT) * scale
    if is_causal:
        s = _ops.where(N.causal_mask(L, S, query.device), s, float("-inf"))
    if attn_mask is not None:
        s = _ops.where(attn_mask, s, float("-inf")) if attn_mask.dtype is D.bool_ else s + attn_mask
    out = dropout(softmax(s, -1), dropout_p, True) @ value
    return out if dead is None else _ops.where(dead, 0.0, out)


def _merge_masks(attn_mask, key_padding_mask, bsz, heads, L, S, dtype):
    """One additive float mask (B, H, L, S) or (L, S), or None, from PyTorch's two masks
    (True in a bool mask means: do not attend)."""
    def additive(m):
        if m.dtype is D.bool_:
            return _ops.zeros(m.shape, dtype=dtype, device=m.device).masked_fill(m, float("-inf"))
        return m.to(dtype)

    mask = None
    if attn_mask is not None:
        mask = additive(attn_mask)
        if mask.dim() == 3:
            mask = mask.reshape(bsz, heads, L, S)
    if key_padding_mask is not None:
        kp = additive(key_padding_mask).reshape(bsz, 1, 1, S)
        mask = kp if mask is None else mask + kp
    return mask


def _pad_last(m, n=1):
    """Masks gain a column for each key appended (bias_k, a zero key): attendable."""
    if m is None:
        return None
    from ._vision import pad
    return pad(m, (0, n))


def mha_batch_first(query, key, value, num_heads, in_proj_weight, in_proj_bias,
                    out_proj_weight, out_proj_bias, *, dropout_p=0.0, training=True,
                    key_padding_mask=None, need_weights=True, attn_mask=None,
                    average_attn_weights=True, is_causal=False, q_proj_weight=None,
                    k_proj_weight=None, v_proj_weight=None, bias_k=None, bias_v=None,
                    add_zero_attn=False, static_k=None, static_v=None):
    """Batch-first (B, L, E) inputs. Returns (output, weights or None)."""
    bsz, L, E = query.shape
    head_dim = E // num_heads
    if in_proj_weight is not None:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    if query is key and key is value and in_proj_weight is not None:
        q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
    else:
        q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _ops.cat([k, bias_k.reshape(1, 1, E).expand(bsz, 1, E)], 1)
        v = _ops.cat([v, bias_v.reshape(1, 1, E).expand(bsz, 1, E)], 1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    q = q.reshape(bsz, L, num_heads, head_dim).transpose(1, 2)
    if static_k is None:
        k = k.reshape(bsz, k.shape[1], num_heads, head_dim).transpose(1, 2)
    else:
        k = static_k.reshape(bsz, num_heads, static_k.shape[1], head_dim)
    if static_v is None:
        v = v.reshape(bsz, v.shape[1], num_heads, head_dim).transpose(1, 2)
    else:
        v = static_v.reshape(bsz, num_heads, static_v.shape[1], head_dim)
    if add_zero_attn:
        zeros = _ops.zeros((bsz, num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = _ops.cat([k, zeros], 2), _ops.cat([v, zeros], 2)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    S = k.shape[2]
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to create "
                           "this mask.")
    mask = _merge_masks(attn_mask, key_padding_mask, bsz, num_heads, L, S, q.dtype)
    p = dropout_p if training else 0.0
    if need_weights:
        s = (q @ k.mT) * (1.0 / math.sqrt(head_dim))
        if mask is not None:
            s = s + mask
        weights = softmax(s, -1)
        out = dropout(weights, p, True) @ v if p > 0 else weights @ v
    else:
        weights = None
        out = scaled_dot_product_attention(q, k, v, mask, p)
    out = linear(out.transpose(1, 2).reshape(bsz, L, E), out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(1)
    return out, weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """PyTorch's F.multi_head_attention_forward: sequence-first (L, N, E) or unbatched
    (L, E) inputs; returns (output, weights or None)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    unbatched = query.dim() == 2
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {query.shape[-1]}")
    if embed_dim_to_check % num_heads:
        raise AssertionError(f"embed_dim {embed_dim_to_check} not divisible by num_heads "
                             f"{num_heads}")
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    same = key is query and value is query
    q = query.transpose(0, 1)
    k = v = q if same else None
    if not same:
        k, v = key.transpose(0, 1), value.transpose(0, 1)
    if not use_separate_proj_weight:
        q_proj_weight = k_proj_weight = v_proj_weight = None
    else:
        in_proj_weight = None
    out, weights = mha_batch_first(
        q, k, v, num_heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
        dropout_p=dropout_p, training=training, key_padding_mask=key_padding_mask,
        need_weights=need_weights, attn_mask=attn_mask,
        average_attn_weights=average_attn_weights, is_causal=is_causal,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight,
        bias_k=bias_k, bias_v=bias_v, add_zero_attn=add_zero_attn, static_k=static_k,
        static_v=static_v)
    out = out.transpose(0, 1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights
