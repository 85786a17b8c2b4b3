"""MultiheadAttention with PyTorch's parameters, initialisation, masks and layouts."""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """The out_proj class PyTorch uses (a Linear; the name keeps state dicts identical)."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not "
                                      "supported")
        kw = {"device": device, "dtype": dtype}
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_ops.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(_ops.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_ops.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_ops.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_ops.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _check(self, query, key, value):
        dims = {2, 3}
        if query.dim() not in dims or key.dim() != query.dim() or value.dim() != query.dim():
            raise RuntimeError(f"{type(self).__name__}: query, key and value must all be 2-D "
                               f"(unbatched) or 3-D, got {list(query.shape)}, {list(key.shape)}, "
                               f"{list(value.shape)}")
        for name, t, n in (("query", query, self.embed_dim), ("key", key, self.kdim),
                           ("value", value, self.vdim)):
            if t.shape[-1] != n:
                raise RuntimeError(f"{type(self).__name__}(embed_dim={self.embed_dim}): expected "
                                   f"{name} with last dimension {n}, got {list(t.shape)}")

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        self._check(query, key, value)
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if not self.batch_first or unbatched:
            q, k, v = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
            if key is query and value is query:
                k = v = q
        else:
            q, k, v = query, key, value
        if key_padding_mask is not None and key_padding_mask.dtype is not D.bool_ and \
                not key_padding_mask.dtype.is_floating_point:
            raise AssertionError("only bool and floating types of key_padding_mask are supported")
        out, weights = F.multi_head_attention_forward(
            q, k, v, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
            self.out_proj.bias, dropout_p=self.dropout, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight)
        if not self.batch_first or unbatched:
            out = out.transpose(0, 1)
        if unbatched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        return out, weights
