"""Activation layers, and MultiheadAttention (where PyTorch keeps it)."""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..functional._attention import mha_batch_first
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


class _Inplace(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    def forward(self, input):
        return F.relu(input, self.inplace)


class ReLU6(_Inplace):
    def forward(self, input):
        return F.relu6(input, self.inplace)


class SiLU(_Inplace):
    def forward(self, input):
        return F.silu(input, self.inplace)


class Mish(_Inplace):
    def forward(self, input):
        return F.mish(input, self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val >= max_val:
            raise ValueError("min_val must be smaller than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class _SoftmaxLike(Module):
    fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self).fn(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxLike):
    fn = staticmethod(F.softmax)


class Softmin(_SoftmaxLike):
    fn = staticmethod(F.softmin)


class LogSoftmax(_SoftmaxLike):
    fn = staticmethod(F.log_softmax)


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
        if add_bias_kv:
            self.bias_k = Parameter(_ops.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_ops.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
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
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

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
        out, weights = mha_batch_first(
            q, k, v, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
            self.out_proj.bias, dropout_p=self.dropout, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, bias_k=self.bias_k, bias_v=self.bias_v,
            add_zero_attn=self.add_zero_attn)
        if not self.batch_first or unbatched:
            out = out.transpose(0, 1)
        if unbatched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        return out, weights


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            (", inplace=True" if self.inplace else "")


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Hardsigmoid(_Inplace):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_Inplace):
    def forward(self, input):
        return F.hardswish(input, self.inplace)


class SELU(_Inplace):
    def forward(self, input):
        return F.selu(input, self.inplace)


class CELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class PReLU(Module):
    """max(0, x) + weight * min(0, x), one learnt slope (or one per channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_ops.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3)
