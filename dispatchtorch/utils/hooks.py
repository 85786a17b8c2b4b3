"""torch.utils.hooks: the handle every register_*_hook returns, and the mark that keeps
a tensor's hook from warning when the tensor is saved. PyTorch's BackwardHook (the
module full-backward-hook machinery) is nn-internal here (nn/modules/_backward_hooks.py)
and absent from this namespace."""
from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """`remove()` deletes entry `id` from hooks_dict and from each extra dict. The dicts
    are held weakly, as in PyTorch, so a handle kept around does not keep a dead
    module's hooks alive."""

    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict) \
            if isinstance(extra_dict, list) else ()

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref)

    def __setstate__(self, state):
        # a dict that did not survive pickling is a dead reference, as in PyTorch
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(OrderedDict() if d is None else d) for d in extra)

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


def unserializable_hook(f):
    """Mark a tensor hook as meant to be lost when the tensor is saved (no warning)."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The hooks register_hook put on `tensor`: a leaf keeps them, a non-leaf's grad_fn
    keeps them per output."""
    node = tensor._grad_fn
    if node is None:
        return list(tensor._hooks or ())
    return list((node.pre_hooks or {}).get(tensor._out_nr, ()))


def warn_if_has_hooks(tensor):
    """Warn for each of the tensor's hooks that saving it would drop, unless the hook is
    marked with unserializable_hook."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
