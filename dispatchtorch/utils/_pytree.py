"""torch.utils._pytree: flatten nested containers to a list of leaves and a TreeSpec that
rebuilds them. Programs and libraries (torch.func, optimizers' state handling, export
code) walk their arguments with it; the node rules, leaf order, key paths and TreeSpec
reprs are PyTorch 2.13's, so specs print and compare the same."""
from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple

__all__ = ["TreeSpec", "LeafSpec", "PyTreeSpec", "keystr", "key_get", "register_pytree_node",
           "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter",
           "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
           "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "SequenceKey", "MappingKey", "GetAttrKey"]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make `cls` a container: flatten_fn(x) -> (children, context), unflatten_fn(children,
    context) -> x. (Serialization names are accepted; treespec_dumps is absent here.)"""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node


# key paths: how tree_flatten_with_path names each leaf
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp) -> str:
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


def is_namedtuple_class(cls) -> bool:
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _seq_keys(children):
    return [SequenceKey(i) for i in range(len(children))]


def _register_builtins():
    def seq(kind, make):
        register_pytree_node(kind, lambda x: (list(x), None), lambda c, _: make(c),
                             flatten_with_keys_fn=lambda x: (list(zip(_seq_keys(x), x)), None))
    seq(tuple, tuple)
    seq(list, list)
    register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                         lambda c, keys: dict(zip(keys, c)),
                         flatten_with_keys_fn=lambda d: ([(MappingKey(k), v) for k, v in d.items()],
                                                         list(d.keys())))
    register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                         lambda c, keys: OrderedDict(zip(keys, c)),
                         flatten_with_keys_fn=lambda d: ([(MappingKey(k), v) for k, v in d.items()],
                                                         list(d.keys())))
    register_pytree_node(
        defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
        lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c)),
        flatten_with_keys_fn=lambda d: ([(MappingKey(k), v) for k, v in d.items()],
                                        [d.default_factory, list(d.keys())]))
    register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda c, maxlen: deque(c, maxlen),
                         flatten_with_keys_fn=lambda d: (list(zip(_seq_keys(d), d)), d.maxlen))
    # every namedtuple class is one node type, its class the context (PyTorch's `namedtuple`)
    register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
                         flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v)
                                                          for f, v in zip(t._fields, t)], type(t)))


_register_builtins()


def _node_type(tree):
    if is_namedtuple_instance(tree):
        return namedtuple
    return type(tree)


def tree_is_leaf(tree, is_leaf=None) -> bool:
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


class TreeSpec:
    """A container's type, its context (keys, class, maxlen) and its children's specs."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type, self._context, self._children = type, context, list(children_specs)
        self.num_children = len(self._children)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
        self.num_leaves = sum(c.num_leaves for c in self._children)

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        return self._children

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (tree must have this structure above)."""
        if self.is_leaf():
            return [tree]
        if _node_type(tree) is not self.type:
            raise ValueError(f"Type mismatch; expected {self.type!r}, but got {_node_type(tree)!r}.")
        children, context = SUPPORTED_NODES[self.type].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                             f"{len(children)}.")
        if context != self._context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        return [sub for c, s in zip(children, self._children) for sub in s.flatten_up_to(c)]

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the "
                             f"spec refers to a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.is_leaf():
            return next(leaves)
        children = [c._build(leaves) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)

    def __repr__(self, indent=0):
        head = f"TreeSpec({self.type.__name__}, {self._context}, ["
        body = ""
        if self._children:
            indent += 2
            body = self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            body += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return head + body + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec) or self.is_leaf() != other.is_leaf():
            return False
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        ctx = self._context
        if self.type is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif isinstance(ctx, list):
            ctx = tuple(ctx)
        try:
            hash(ctx)
        except TypeError:
            ctx = None
        return hash((self.type, ctx, tuple(self._children)))


class LeafSpec(TreeSpec):
    """The spec of one leaf."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])
        self.num_nodes, self.num_leaves = 1, 1

    def __repr__(self, indent=0):
        return "*"


PyTreeSpec = TreeSpec
_LEAF = LeafSpec()


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    kind = _node_type(tree)
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
                        f"TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """tree_map for side effects: calls func on each leaf and returns `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _type_filter(type_or_types, func):
    def mapped(x):
        return func(x) if isinstance(x, type_or_types) else x
    return mapped


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(_type_filter(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    return tree_map_(_type_filter(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _flatten_with_path(tree, is_leaf, path, out):
    if tree_is_leaf(tree, is_leaf):
        out.append((path, tree))
        return
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node.type}. Please pass a "
                         f"flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        _flatten_with_path(child, is_leaf, path + (key,), out)


def tree_flatten_with_path(tree, is_leaf=None):
    out = []
    _flatten_with_path(tree, is_leaf, (), out)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(kp, x, *xs) for (kp, x), *xs in zip(pairs, *others))
