"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from __future__ import annotations

import operator
from collections import OrderedDict

from ..parameter import Parameter
from .module import Module


def _index(idx, n, what):
    i = operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for a {what} of length {n}")
    return i + n if i < 0 else i


class Sequential(Module):
    """Modules applied in order; built from modules or from an OrderedDict of them."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "Sequential")]]):
            del self._modules[key]
        # PyTorch renumbers the remaining modules
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def __add__(self, other):
        return Sequential(*self, *other)


class ModuleList(Module):
    """A list of modules, registered so that their parameters are visible."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        items = list(self._modules.values())
        del items[idx if isinstance(idx, slice) else _index(idx, len(items), "ModuleList")]
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList([*self, *other])

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def index(self, module):
        for i, m in enumerate(self):
            if m is module:
                return i
        raise ValueError(f"{module!r} is not in the ModuleList")

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(); iterate over it instead")


class _NamedDict:
    """The dict protocol over one of Module's registries (`_store` names it)."""

    _store = "_modules"

    def _d(self):
        return getattr(self, self._store)

    def __delitem__(self, key):
        del self._d()[key]

    def __len__(self):
        return len(self._d())

    def __iter__(self):
        return iter(self._d())

    def __contains__(self, key):
        return key in self._d()

    def keys(self):
        return self._d().keys()

    def values(self):
        return self._d().values()

    def items(self):
        return self._d().items()

    def pop(self, key):
        return self._d().pop(key)

    def clear(self):
        self._d().clear()

    def update(self, entries):
        for key, v in (entries.items() if hasattr(entries, "items") else entries):
            self[key] = v


class ModuleDict(_NamedDict, Module):
    """A dict of modules, registered so that their parameters are visible."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(); index it instead")


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped in Parameter)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx, param):
        idx = _index(idx, self._size, "ParameterList")
        setattr(self, str(idx), _as_parameter(param))

    def append(self, value):
        i = self._size
        self._size += 1
        setattr(self, str(i), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def __iadd__(self, values):
        return self.extend(values)

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            size = "x".join(str(s) for s in p.shape)
            lines.append(f"({i}): Parameter containing: [{p.dtype} of size {size}]")
        return "\n".join(lines)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward()")


class ParameterDict(_NamedDict, Module):
    """A dict of parameters (plain tensors are wrapped in Parameter)."""

    _store = "_parameters"

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward()")


def _as_parameter(value):
    from ..._tensor import Tensor
    if isinstance(value, Parameter) or not isinstance(value, Tensor):
        return value
    return Parameter(value)


class Container(Module):
    """The deprecated keyword-argument container (use Sequential / ModuleDict)."""

    def __init__(self, **kwargs):
        super().__init__()
        import warnings
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented "
                      "in nn.Module. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)
