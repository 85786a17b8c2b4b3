"""Transformer, TransformerEncoder/Decoder and their layers (post- or pre-norm, as
PyTorch)."""
from __future__ import annotations

import copy

from ... import ops as _ops
from .. import functional as F
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The additive causal mask: 0 on and below the diagonal, -inf above."""
    from ...ops.nn_ops import causal_mask
    allowed = causal_mask(sz, sz, device if device is not None else "cpu")
    return _ops.zeros((sz, sz), dtype=dtype, device=device).masked_fill(~allowed, float("-inf"))


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        causal = _detect_is_causal_mask(mask, is_causal, _seq_len(
            src, self.layers[0].self_attn.batch_first))
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=causal)
        return self.norm(out) if self.norm is not None else out


def _detect_is_causal_mask(mask, is_causal, size):
    """PyTorch's rule: an explicit is_causal wins; otherwise a given mask counts as
    causal when it equals the square subsequent mask."""
    causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        ref = generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        causal = tuple(mask.shape) == tuple(ref.shape) and bool((mask == ref).all().item())
    return causal


def _seq_len(src, batch_first):
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


class TransformerDecoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        out = tgt
        seq_len = _seq_len(tgt, self.layers[0].self_attn.batch_first)
        causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=causal,
                        memory_is_causal=memory_is_causal)
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                        **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                        **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self):
        from .. import init
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batched = src.dim() == 3
        if batched and src.shape[0 if self.batch_first else 1] != \
                tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
