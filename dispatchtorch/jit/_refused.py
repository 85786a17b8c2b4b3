"""TorchScript itself, which dispatchtorch does not have: each entry point raises
NotImplementedError naming itself and what to use instead, rather than pretend."""
from __future__ import annotations

_INSTEAD = {
    "script": "use dispatchtorch.compile(model) to capture and fuse a model, or "
              "dispatchtorch.export.export(model, args) for a code-free graph",
    "trace": "use dispatchtorch.export.export(model, args) (a graph of the ops one call runs) "
             "or dispatchtorch.compile(model)",
    "save": "use dispatchtorch.export.save(ep, f) for an exported program, or "
            "dispatchtorch.save(model.state_dict(), f) for the weights",
    "load": "use dispatchtorch.export.load(f) for an exported program, or "
            "dispatchtorch.load(f) for a state dict",
    "freeze": "use dispatchtorch.export.export(model.eval(), args): its graph holds the "
              "weights as constants of the program",
}


def _refuse(name):
    how = _INSTEAD.get(name, _INSTEAD["script"])
    return NotImplementedError(f"torch.jit.{name} is not supported: dispatchtorch has no "
                               f"TorchScript; {how}")


def script(obj=None, *args, **kwargs):
    raise _refuse("script")


def trace(func=None, *args, **kwargs):
    raise _refuse("trace")


def trace_module(mod=None, *args, **kwargs):
    raise _refuse("trace_module")


def save(m=None, *args, **kwargs):
    raise _refuse("save")


def load(f=None, *args, **kwargs):
    raise _refuse("load")


def freeze(mod=None, *args, **kwargs):
    raise _refuse("freeze")


def optimize_for_inference(mod=None, *args, **kwargs):
    raise _refuse("optimize_for_inference")


def export_opnames(m=None):
    raise _refuse("export_opnames")


class _Refused:
    """A TorchScript class: isinstance checks answer False; constructing one raises."""

    def __init__(self, *args, **kwargs):
        raise _refuse(type(self).__name__)


class ScriptModule(_Refused):
    pass


class ScriptFunction(_Refused):
    pass


class CompilationUnit(_Refused):
    pass


class Error(Exception):
    """torch.jit.Error: what a TorchScript `raise` surfaces as; never raised here, caught
    by code that handles it."""
