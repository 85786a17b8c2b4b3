"""dispatchtorch.nn: PyTorch's layers, written only in public ops, so every model runs
on whichever backend its tensors live on."""
from . import attention, common_types, functional, grad, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _layers
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
from . import parallel  # noqa: F401,E402  (torch.nn.parallel.DistributedDataParallel)
from .parallel import DataParallel  # noqa: E402  (torch.nn.DataParallel)


def factory_kwargs(kwargs):
    """PyTorch's helper for layers' factory arguments: the device / dtype /
    memory_format entries of kwargs (also given as kwargs["factory_kwargs"])."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r


__all__ = ["Buffer", "DataParallel", "Parameter", "UninitializedBuffer", "UninitializedParameter",
           "common_types", "factory_kwargs", "functional", "grad", "init", "utils", *_layers]
