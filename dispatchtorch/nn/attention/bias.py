"""torch.nn.attention.bias: causal masks that F.scaled_dot_product_attention reads as
a variant of is_causal instead of a materialized tensor.

PyTorch's CausalBias is a Tensor subclass that intercepts SDPA through
__torch_function__; here it is a plain object that F.scaled_dot_product_attention
recognizes (so `isinstance(bias, torch.Tensor)` is False here, and ops other than SDPA
take `bias._materialize()`). Upper-left is `is_causal=True`; lower-right aligns the
diagonal to the bottom-right corner (query i sees keys up to i + S - L)."""
from __future__ import annotations

import enum
import warnings

from ... import _dtype as D
from ... import ops as _ops

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Where a causal mask's diagonal starts: the top-left or the bottom-right corner."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A (seq_len_q, seq_len_kv) causal mask for F.scaled_dot_product_attention."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _materialize(self, device=None):
        """The bool mask (True: attend)."""
        ones = _ops.ones(self.seq_len_q, self.seq_len_kv, dtype=D.bool_, device=device or "cpu")
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return _ops.tril(ones, diagonal=offset)

    def __repr__(self):
        return repr(self._materialize())

    def attention(self, sdpa, query, key, value, dropout_p, is_causal, scale, enable_gqa):
        """F.scaled_dot_product_attention with this mask, as PyTorch's _dispatch."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if self.seq_len_q == self.seq_len_kv or self.variant == CausalVariant.UPPER_LEFT:
            return sdpa(query, key, value, None, dropout_p, True, scale, enable_gqa)
        return sdpa(query, key, value, self._materialize(query.device), dropout_p, False, scale,
                    enable_gqa)


def causal_upper_left(*size):
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
