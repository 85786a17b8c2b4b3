"""The restricted unpickler for PyTorch checkpoints (torch.load's weights_only=True).

It subclasses pickle's pure-Python Unpickler so that, besides find_class (globals
from the allowlist only, never imported), the opcodes that call or mutate objects are
restricted too, as PyTorch's own weights_only unpickler restricts them: REDUCE calls
only allowlisted callables, NEWOBJ builds only allowlisted classes, BUILD sets state
only on OrderedDict / Counter and allowlisted classes, APPEND / SETITEM / ADDITEMS
fill only lists, dicts and sets, and persistent ids name storages only. Nothing the
file names is imported or looked up by name."""
from __future__ import annotations

import collections
import pickle

from .. import _safe_globals
from . import allowlist

_P = pickle._Unpickler          # the pure-Python one: its opcode table can be restricted
_DICTS = (dict, collections.OrderedDict, collections.Counter)


class _StorageIds(_P):
    """Both unpicklers: persistent ids name the file's storages, and nothing else."""

    def __init__(self, file, storage, encoding="utf-8"):
        """storage: fn(storage_type, key, location, numel) -> StorageRef (None: the
        pickle may name no storage)."""
        super().__init__(file, encoding=encoding)
        self._storage = storage
        self._user = _safe_globals.user_allowed()
        self._ok = {id(v) for v in (*allowlist.allowed().values(), *self._user.values())}

    def persistent_load(self, pid):
        if type(pid) is not tuple or len(pid) < 5 or pid[0] not in ("storage", b"storage"):
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                         f"{pid!r:.80}")
        if self._storage is None:
            raise pickle.UnpicklingError("this pickle may not name a storage")
        stype, key, location, numel = pid[1:5]
        if not isinstance(stype, allowlist.StorageType):
            raise pickle.UnpicklingError(f"a storage id names {stype!r}, not a storage type")
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if not isinstance(key, str) or not isinstance(location, str) or not isinstance(
                numel, int) or numel < 0:
            raise pickle.UnpicklingError(f"malformed storage id {pid!r:.120}")
        return self._storage(stype, key, location, numel, pid[5:])


class Unpickler(_StorageIds):
    dispatch = dict(_P.dispatch)

    def find_class(self, module, name):
        module, name = allowlist.canonical(module, name)
        full = f"{module}.{name}"
        if module in allowlist.BLOCKED_MODULES:
            raise allowlist.unsupported(full, module)
        found = allowlist.allowed().get(full)
        if found is None:
            found = self._user.get(full)
        if found is None:
            raise allowlist.unsupported(full, module)
        return found

    def _check_callable(self, func, what):
        if id(func) not in self._ok or not callable(func):
            raise pickle.UnpicklingError(f"Trying to {what} for unrecognized function {func!r:.80}")

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._check_callable(func, "call reduce")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
        self.stack[-1] = func(*args)

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self._new(cls, args, {})

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self._new(cls, args, kwargs)

    def _new(self, cls, args, kwargs):
        from ..nn.parameter import Parameter
        if not isinstance(cls, type) or id(cls) not in self._ok:
            raise pickle.UnpicklingError(f"Can only create new object for nn.Parameter or classes "
                                         f"allowlisted via `add_safe_globals` but got {cls!r:.80}")
        self.append(Parameter(*args) if cls is Parameter else cls.__new__(cls, *args, **kwargs))

    def load_build(self):
        state = self.stack[-1]
        inst = self.stack[-2]
        if type(inst) in (collections.OrderedDict, collections.Counter):
            if not isinstance(state, dict):
                raise pickle.UnpicklingError("OrderedDict state must be a dict")
            self.stack.pop()
            inst.__dict__.update(state)
            return
        if id(type(inst)) not in {id(v) for v in self._user.values()}:
            raise pickle.UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types "
                                         f"allowlisted via `add_safe_globals`, but got "
                                         f"{type(inst)}")
        super().load_build()

    def _target(self, kinds, what):
        target = self.stack[-1]
        if type(target) not in kinds:
            raise pickle.UnpicklingError(f"Can only {what} {' or '.join(k.__name__ for k in kinds)}"
                                         f", but got {type(target)}")

    def load_append(self):
        value = self.stack.pop()
        self._target((list,), "append to")
        self.stack[-1].append(value)

    def load_appends(self):
        items = self.pop_mark()
        self._target((list,), "extend")
        self.stack[-1].extend(items)

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._target(_DICTS, "SETITEM for")
        self.stack[-1][key] = value

    def load_setitems(self):
        items = self.pop_mark()
        self._target(_DICTS, "SETITEMS for")
        for i in range(0, len(items), 2):
            self.stack[-1][items[i]] = items[i + 1]

    def load_additems(self):
        items = self.pop_mark()
        self._target((set,), "ADDITEMS to")
        self.stack[-1].update(items)

    def load_inst(self):
        raise pickle.UnpicklingError("the INST opcode (pickle protocol 0) is not supported")

    load_obj = load_inst

    dispatch[pickle.APPEND[0]] = load_append
    dispatch[pickle.APPENDS[0]] = load_appends
    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.SETITEMS[0]] = load_setitems
    dispatch[pickle.ADDITEMS[0]] = load_additems
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex
    dispatch[pickle.BUILD[0]] = load_build
    dispatch[pickle.INST[0]] = load_inst
    dispatch[pickle.OBJ[0]] = load_obj
    for _op in (pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = load_inst


class FullUnpickler(_StorageIds):
    """torch.load's weights_only=False (trusted files only: it imports and calls what the
    file names, as pickle does). PyTorch's globals still come from the allowlist's table,
    as dispatchtorch's counterparts; one the table lacks (torch.nn.Linear pickled by
    PyTorch) has none here and is refused, naming it, rather than imported from PyTorch."""

    def find_class(self, module, name):
        module, name = allowlist.canonical(module, name)
        full = f"{module}.{name}"
        found = allowlist.allowed().get(full)
        if found is None:
            found = self._user.get(full)
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(
                f"{full}: dispatchtorch.load has no counterpart for this PyTorch global (a "
                f"whole PyTorch module or object); re-save its state_dict under PyTorch")
        return super().find_class(module, name)


def load(file, storage=None, encoding="utf-8", full=False):
    """full: weights_only=False's unpickler (see FullUnpickler)."""
    return (FullUnpickler if full else Unpickler)(file, storage, encoding).load()


__all__ = ["Unpickler", "FullUnpickler", "load"]
