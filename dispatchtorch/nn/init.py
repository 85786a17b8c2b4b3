"""nn.init: PyTorch's initialisers, with its distributions and fan computations.

The numbers come from dispatchtorch's generator (numpy PCG64), so they differ from
PyTorch's for the same seed; the distributions are the same.
"""
from __future__ import annotations

import math
import warnings

from .. import ops as _ops
from ..autograd.grad_mode import no_grad


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_ops.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) restricted to [a, b], drawn as PyTorch 2.13 draws it (so a seed
    gives its numbers): resampling out-of-range normals when [a, b] holds more than 30% of
    the mass, else rejection sampling from a uniform proposal on [a, b]."""
    if tensor.is_meta:
        return tensor

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            return _resample_outside(tensor, mean, std, a, b, generator)
        return _reject_uniform(tensor, mean, std, a, b, generator)


def _resample_outside(tensor, mean, std, a, b, generator):
    lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < lo) | (result > hi)
        if not outside.any():
            return result
        fresh = _ops.empty_like(result).normal_(mean, std, generator=generator)
        result.copy_(_ops.where(outside, fresh, result))


def _reject_uniform(tensor, mean, std, a, b, generator):
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    accept_buf = _ops.empty_like(tensor)

    def rejected(candidates):
        log_pdf = candidates.sub(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        return accept_buf.uniform_(generator=generator).log_().gt(log_pdf)

    tensor.uniform_(a, b, generator=generator)
    pending = rejected(tensor.clone())
    result = tensor
    while pending.any():
        candidates = _ops.empty_like(tensor).uniform_(a, b, generator=generator)
        result = _ops.where(pending, candidates, result)
        pending = _ops.where(pending, rejected(candidates), pending)
    return tensor.copy_(result)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR factorisation of a Gaussian one (drawn as
    PyTorch draws it; the QR runs on the host in the tensor's precision), signs fixed so
    that Q is uniformly distributed."""
    import numpy as np

    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view_as(_ops.from_numpy(q)).copy_(_ops.from_numpy(np.ascontiguousarray(q)))
        return tensor.mul_(gain)


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    m = min(out_per_group, tensor.shape[1])
    import numpy as np
    w = np.zeros(tuple(tensor.shape))
    for g in range(groups):
        for d in range(m):
            w[(g * out_per_group + d, d) + tuple(s // 2 for s in tensor.shape[2:])] = 1
    with no_grad():
        return tensor.copy_(_ops.tensor(w, dtype=tensor.dtype))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std) values with ceil(sparsity * rows) zeros in every column of a 2-D tensor."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero = _ops.randperm(rows, generator=generator)[:num_zeros]
            tensor[zero, col] = 0
    return tensor


# the old names without the trailing underscore
uniform, normal, constant = uniform_, normal_, constant_
xavier_uniform, xavier_normal = xavier_uniform_, xavier_normal_
kaiming_uniform, kaiming_normal, orthogonal = kaiming_uniform_, kaiming_normal_, orthogonal_
eye, dirac, sparse = eye_, dirac_, sparse_
