"""define-by-run reverse-mode autograd: graph recording lives in the ops, the engine,
Function and gradcheck here (loaded on first use, so ops can import grad_mode)."""
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)

_LAZY = {"backward": "engine", "grad": "engine", "Function": "function",
         "FunctionCtx": "function", "once_differentiable": "function", "gradcheck": "checks",
         "gradgradcheck": "checks", "GradcheckError": "checks",
         "graph": None, "functional": None, "Variable": "function", "anomaly_mode": None,
         "detect_anomaly": "anomaly_mode", "set_detect_anomaly": "anomaly_mode",
         "is_anomaly_enabled": "anomaly_mode", "is_anomaly_check_nan_enabled": "anomaly_mode",
         "profiler": None}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'dispatchtorch.autograd' has no attribute '{name}'")
    import importlib
    mod = _LAZY[name]
    if mod is None:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{mod}", __name__), name)


__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "no_grad", "set_grad_enabled",
           *_LAZY]
