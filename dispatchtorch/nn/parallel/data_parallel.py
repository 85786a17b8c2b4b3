"""DataParallel: PyTorch's single-process, many-GPU wrapper. Here it runs the module on
its own device in this one process (no replication or scatter across devices), so
scripts that wrap a model in it run unchanged; use DistributedDataParallel to train on
several devices or machines."""
from __future__ import annotations

from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None and len(device_ids) > 1:
            raise NotImplementedError(
                "DataParallel over several devices: dispatchtorch runs DataParallel on one "
                "device; use DistributedDataParallel (one process per device) instead")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
