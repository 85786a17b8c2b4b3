"""The pytree node registry and TreeSpec, the structure tree_flatten returns: the root's
node type and context and a spec per child, with PyTorch 2.13's repr, equality, hash and
unflatten / flatten_up_to errors. torch.utils._pytree re-exports all of it."""
from __future__ import annotations

import dataclasses
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, NamedTuple


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


SUPPORTED_NODES: dict = {}
# our torch.return_types results are namedtuples; PyTorch's are structseqs, registered by
# class with positional keys, so these classes are looked up as themselves
_STRUCTSEQS: set = set()
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
_PLAIN = frozenset({tuple, list, dict})


def is_namedtuple_class(cls) -> bool:
    """A tuple subclass with namedtuple's _fields, _make and _asdict."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def _get_node_type(tree):
    """The registry key: every namedtuple class is the one `namedtuple` node, as in PyTorch."""
    t = type(tree)
    if t in _PLAIN or t in _STRUCTSEQS or not is_namedtuple_class(t):
        return t
    return namedtuple


class TreeSpec:
    """A pytree's structure; a leaf's spec has type None, context None and no children."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        init = object.__setattr__
        init(self, "type", type)
        init(self, "_context", context)
        init(self, "_children", children_specs)
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(children_specs) != 0:
                raise AssertionError("leaf node should not have children")
            nodes = leaves = 1
        else:
            nodes = 1 + sum(c.num_nodes for c in children_specs)
            leaves = sum(c.num_leaves for c in children_specs)
        init(self, "num_nodes", nodes)
        init(self, "num_leaves", leaves)
        init(self, "num_children", len(children_specs))

    def __setattr__(self, name, value):       # frozen, as PyTorch's dataclass: it is hashed
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):
        return TreeSpec, (self.type, self._context, self._children)

    def __repr__(self, indent: int = 0) -> str:
        out = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self._children:
            indent += 2
            out += self._children[0].__repr__(indent)
            out += "," if len(self._children) > 1 else ""
            out += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return out + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif not (t is None or t in BUILTIN_TYPES):
            ctx = None                   # a custom node's context may be unhashable
        return hash((t, ctx, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to "
                      "access a single child, or `treespec.children()` to get all children.",
                      FutureWarning, stacklevel=2)
        return self._children

    def children(self):
        return self._children.copy()

    def child(self, index):
        return self._children[index]

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def unflatten(self, leaves):
        """The tree of this structure with `leaves` in order at its leaves."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.type is None:
            return next(leaves)
        children = [c._build(leaves) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (tree must have this structure down
        to them); tree_map's other trees go through it."""
        out = []
        self._up_to(tree, out)
        return out

    def _up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        for sub, spec in zip(_children_matching(self, node), self._children):
            spec._up_to(sub, out)


def _children_matching(spec, node):
    """`node`'s children in spec's order, or PyTorch's ValueError naming the mismatch."""
    t = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:             # a custom node matches exactly
        if t != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {t!r}.")
        children, context = SUPPORTED_NODES[t].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
        return children
    dicts = spec.type in STANDARD_DICT_TYPES and t in STANDARD_DICT_TYPES
    if not dicts and t != spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {t!r}.")
    if len(node) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                         f"{len(node)}.")
    if dicts:                                      # any dict kind, keys matched as a set
        keys = spec._context if spec.type is not defaultdict else spec._context[1]
        got, want = set(node), set(keys)
        if got != want:
            message = ""
            if want - got:
                message += f"; missing key(s): {want - got}"
            if got - want:
                message += f"; extra key(s): {got - want}"
            raise ValueError(f"Node keys mismatch{message}.")
        return [node[k] for k in keys]
    children, context = SUPPORTED_NODES[t].flatten_fn(node)
    if t is not deque and context != spec._context:          # a deque's maxlen may differ
        raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected "
                         f"{spec._context!r}, but got {context!r}.")
    return children


class LeafSpec(TreeSpec):
    """The spec of a leaf. PyTorch deprecates constructing it (tree_flatten's leaves share
    one); it warns as PyTorch's does."""

    __slots__ = ()

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use "
                      "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                      FutureWarning, stacklevel=2)
        TreeSpec.__init__(self, None, None, [])

    def __reduce__(self):
        return _leaf_spec, ()

    def __repr__(self, indent: int = 0) -> str:
        return "*"


def _leaf_spec():
    return _LEAF_SPEC


_LEAF_SPEC = object.__new__(LeafSpec)
TreeSpec.__init__(_LEAF_SPEC, None, None, [])
