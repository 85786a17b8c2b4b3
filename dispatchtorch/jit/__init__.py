"""torch.jit as eager model code meets it: the decorators and annotations that are no-ops
outside TorchScript, and the predicates saying nothing is scripted or traced. There is
no TorchScript here: script / trace / save / load / freeze raise NotImplementedError
pointing to dispatchtorch.compile, dispatchtorch.export and dispatchtorch.save."""
from __future__ import annotations

from typing import Final  # noqa: F401  (torch.jit.Final is typing.Final)

from ._annotations import Attribute, annotate, isinstance  # noqa: A004
from ._modifiers import (FunctionModifiers, export, ignore, interface, is_scripting,  # noqa: F401
                         is_tracing, script_if_tracing, strict_fusion, unused)
from ._refused import (CompilationUnit, Error, ScriptFunction, ScriptModule, export_opnames,
                       freeze, load, optimize_for_inference, save, script, trace, trace_module)

__all__ = ["Attribute", "CompilationUnit", "Error", "Final", "ScriptFunction", "ScriptModule",
           "annotate", "export", "export_opnames", "freeze", "ignore", "interface", "is_scripting",
           "is_tracing", "isinstance", "load", "optimize_for_inference", "save", "script",
           "script_if_tracing", "strict_fusion", "trace", "trace_module", "unused"]
