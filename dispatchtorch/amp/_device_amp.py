"""The deprecated per-device spellings torch.cuda.amp and torch.cpu.amp: autocast and
GradScaler with the device fixed (and PyTorch's deprecation warnings)."""
from __future__ import annotations

import types
import warnings

from . import autocast_mode, grad_scaler
from .. import _dtype as D


def _module(device_type, default_dtype):
    mod = types.ModuleType(f"dispatchtorch.{device_type}.amp",
                           f"torch.{device_type}.amp: the deprecated spelling of torch.amp "
                           f"with device_type='{device_type}'.")

    class autocast(autocast_mode.autocast):
        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warnings.warn(f"`torch.{device_type}.amp.autocast(args...)` is deprecated. Please "
                          f"use `torch.amp.autocast('{device_type}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device_type, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warnings.warn(f"`torch.{device_type}.amp.GradScaler(args...)` is deprecated. Please "
                          f"use `torch.amp.GradScaler('{device_type}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        return autocast_mode.custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

    def custom_bwd(bwd=None):
        return autocast_mode.custom_bwd(bwd, device_type=device_type)

    for obj in (autocast, GradScaler):
        obj.__module__ = mod.__name__
        obj.__qualname__ = obj.__name__
    mod.autocast, mod.GradScaler = autocast, GradScaler
    mod.custom_fwd, mod.custom_bwd = custom_fwd, custom_bwd
    mod.__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
    return mod


cuda_amp = _module("cuda", D.float16)
cpu_amp = _module("cpu", D.bfloat16)
