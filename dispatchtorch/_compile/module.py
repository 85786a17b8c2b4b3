"""OptimizedModule: what compile(module) returns (as torch's): it holds the original
module as `_orig_mod` (so parameters are shared and state_dict keys get the
`_orig_mod.` prefix) and runs the module's call (hooks and forward) compiled."""
from __future__ import annotations

from ..nn.modules.module import Module
from .compiled import CompiledFunction


class OptimizedModule(Module):
    def __init__(self, mod, *, fullgraph=False, backend="inductor", options=None, dynamic=None):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = CompiledFunction(mod, module=mod, fullgraph=fullgraph,
                                                      backend=backend, options=options,
                                                      dynamic=dynamic)
        self.__dict__["training"] = mod.training

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def train(self, mode=True):
        self._orig_mod.train(mode)
        self.__dict__["training"] = mode
        return self

    def explain(self):
        """The captured graphs and generated kernels (see CompiledFunction.explain)."""
        return self._compiled.explain()
