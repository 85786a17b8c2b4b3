"""The signature's Python part: what a compiled call's Python reads besides its tensor
arguments. There is no bytecode analysis, so a replay runs the branches and constants
the capture took; these readers put the values it may have read into the signature,
and a change captures again (as torch.compile's guards do).
"""
from __future__ import annotations

import inspect
import operator
import types

from .. import _dtype as D
from .._tensor import Tensor
from ..amp._state import STATE as AUTOCAST
from ..nn.modules import module as _nn_module

PLAIN = frozenset((int, float, bool, str, type(None)))
_HOOK_STORES = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_STORES = ("_global_forward_pre_hooks", "_global_forward_hooks", "_global_backward_hooks",
                  "_global_backward_pre_hooks")
HOOKS = ("module hooks: a forward or backward hook registered on the module, one of its "
         "submodules or globally is Python code whose side effects a replay would not repeat")


def ambient():
    """The thread's settings that choose a capture's kernels besides grad mode:
    autocast's device types and dtypes, and the default dtype."""
    cast = AUTOCAST.active and tuple(sorted((d, AUTOCAST.dtypes.get(d))
                                            for d, on in AUTOCAST.enabled.items() if on))
    return cast, D.get_default_dtype()


def state_reader(m):
    """(m's __dict__, a getter of its plain attributes: training, p, eps, a scale the
    forward reads, whether it has call hooks). The names are taken once (a C getter
    per call: 27 modules' states in ~10 us instead of ~55 us by scanning the dicts)."""
    d = m.__dict__
    names = sorted({k for k, v in d.items() if type(v) in PLAIN} | {"_call_hooks"})
    d.setdefault("_call_hooks", False)
    return d, operator.itemgetter(*names)


def module_states(readers):
    """The modules' plain attributes and their hooks' ids: a forward's Python reads
    them, and a replay would keep the captured ones."""
    out = []
    for d, get in readers:
        out.append(get(d))
        if d["_call_hooks"]:
            out.append(tuple(tuple(d[s]) for s in _HOOK_STORES))
    return tuple(out)


def global_hooks():
    return tuple(tuple(getattr(_nn_module, s)) for s in _GLOBAL_STORES) \
        if _nn_module._GLOBAL_HOOKS_ON[0] else ()


def hooked(modules):
    """Whether a hook other than the library's own replayable ones (weight_norm's and
    spectral_norm's, which compute tensors only) would run in the module's call."""
    if any(global_hooks()):
        return True
    for m in modules:
        d = m.__dict__
        if d.get("_call_hooks") and any(not getattr(h, "_replayable", False)
                                        for s in _HOOK_STORES for h in d[s].values()):
            return True
    return False


_MISSING = object()


def _names_read(code):
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:                  # a cell not assigned yet
        return _MISSING


def python_reads(fn):
    """A function of no arguments returning the plain values a plain function's code
    may read by name: the globals and closure variables it names that hold an int,
    float, bool, str or None (`lambda x: x * SCALE`), those of the named objects'
    attributes (`cfg.temp`, looked up without running properties), and the plain
    attributes and hooks of the Modules among them (a closure over a model:
    `model.eval()` changes what its forward computes). None when there is nothing to
    read (a Module's own compile reads its state through state_reader)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    names = _names_read(code)
    scope = getattr(fn, "__globals__", {})
    getters, objects, modules = [], [], []

    def consider(value, getter):
        if type(value) in PLAIN:
            getters.append(getter)
        elif isinstance(value, _nn_module.Module):
            modules.extend(value.modules())
        elif not isinstance(value, (Tensor, type, types.ModuleType, types.FunctionType,
                                    types.BuiltinFunctionType, types.MethodType)):
            objects.append(value)

    for n in sorted(names):
        if n in scope:
            consider(scope[n], lambda n=n: scope.get(n, _MISSING))
    for n, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        consider(_cell(cell), lambda cell=cell: _cell(cell))
    for obj in objects:
        for n in sorted(names):
            if type(inspect.getattr_static(obj, n, _MISSING)) in PLAIN:
                getters.append(lambda obj=obj, n=n: inspect.getattr_static(obj, n, _MISSING))
    self_ = getattr(fn, "__self__", None)
    if isinstance(self_, _nn_module.Module):
        modules.extend(self_.modules())
    readers = [state_reader(m) for m in dict.fromkeys(modules)]
    if not getters and not readers:
        return None

    def read():
        return tuple([g() for g in getters]), module_states(readers)
    return read
