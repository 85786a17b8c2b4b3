"""default_collate: a list of samples -> a batch, recursively, as PyTorch's."""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor
from .dataset import Batch


def default_collate(batch):
    if isinstance(batch, Batch):          # TensorDataset batches arrive already stacked
        return list(batch.tensors)
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _ops.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        return _ops.stack([_ops.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return _ops.tensor(np.array(batch))
    if isinstance(elem, bool):
        return _ops.tensor(batch)
    if isinstance(elem, float):
        return _ops.tensor(batch, dtype=D.float64)
    if isinstance(elem, numbers.Integral):
        return _ops.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):          # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, (tuple, list)):
            return columns                   # PyTorch returns a list for tuples too
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(elem)}")


def default_convert(data):
    """What a DataLoader without batching applies: numpy arrays become tensors."""
    if isinstance(data, np.ndarray):
        return _ops.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data
