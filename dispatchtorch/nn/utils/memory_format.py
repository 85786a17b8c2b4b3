"""convert_conv2d/3d_weight_memory_format: PyTorch's channels-last conversion: the
convolutions' weights laid out in memory_format (values unchanged), so the convolutions
give results in it (docs/dropin.md, "memory_format")."""
from __future__ import annotations


def _convert(module, memory_format, conv_types):
    from ..modules.conv import _ConvNd
    if isinstance(module, _ConvNd) and type(module).__name__ in conv_types:
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, conv_types)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, ("Conv2d", "ConvTranspose2d"))


def convert_conv3d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, ("Conv3d", "ConvTranspose3d"))
