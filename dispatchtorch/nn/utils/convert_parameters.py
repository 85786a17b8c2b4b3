"""parameters_to_vector / vector_to_parameters."""
from __future__ import annotations

from ... import ops as _ops
from ..._tensor import Tensor


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    device = None
    for p in params:
        if device is not None and p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently not "
                            "supported.")
        device = p.device
    return _ops.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of vec into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: the vector has {vec.numel()} elements, the "
                           f"parameters {total}")
    start = 0
    for p in params:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
