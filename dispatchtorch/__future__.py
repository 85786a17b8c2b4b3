"""torch.__future__: process-wide switches for behaviour PyTorch plans to make the
default. Both change how nn.Module's conversions (`.to()`, `.double()`, `.cuda()`,
`.to_empty()`, ...) treat parameters, and the swap switch also changes load_state_dict
(nn/modules/module.py reads them; docs/nn.md, "Conversion and torch.__future__")."""

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Conversions put new Parameter objects into the module instead of changing the
    existing ones' data in place (`.data =`)."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether conversions assign new parameters (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Conversions and load_state_dict exchange each parameter's contents with its new
    value by torch.utils.swap_tensors (the objects stay, their .grad is converted too);
    load_state_dict transforms each value with `param.module_load(value, assign=...)`
    first. Takes precedence over the overwrite switch."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether conversions and load_state_dict swap tensors (default False)."""
    return _swap_module_params_on_conversion
