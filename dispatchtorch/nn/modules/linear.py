"""Identity, Linear, Bilinear, LazyLinear."""
from __future__ import annotations

import math

from ... import ops as _ops
from .. import functional as F
from .. import init
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, install_lazy_hooks
from .module import Module


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias; weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)) as PyTorch."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_ops.empty((out_features, in_features), **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(_ops.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if not input.shape or input.shape[-1] != self.in_features:
            raise RuntimeError(f"{self!r}: expected input with last dimension {self.in_features}, "
                               f"got input of shape {list(input.shape)}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1 @ weight[o] @ x2 + bias[o]; init U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(_ops.empty((out_features, in1_features, in2_features),
                                           **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(_ops.empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        if input1.shape[-1:] != (self.in1_features,) or input2.shape[-1:] != (self.in2_features,):
            raise RuntimeError(f"{self!r}: expected inputs [..., {self.in1_features}] and "
                               f"[..., {self.in2_features}], got {list(input1.shape)} and "
                               f"{list(input2.shape)}")
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The out_proj class PyTorch uses (a Linear; the name keeps state dicts identical)."""


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features comes from the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Linear.__init__(self, 0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        install_lazy_hooks(self)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params() and self.in_features == 0:
            self.in_features = self.weight.shape[1]      # materialized by load_state_dict
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
