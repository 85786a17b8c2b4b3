"""torch.utils._pytree: nested containers flattened to their leaves plus a TreeSpec that
rebuilds them, so code written over "any nesting of tensors" (tree_map over a model's
outputs, a state's leaves) runs unchanged. Node types, leaf order (a dict keeps its
insertion order), key paths, reprs and errors are PyTorch 2.13's; None is a leaf there
and here. Absent: treespec serialization (treespec_dumps / treespec_loads),
register_dataclass, register_constant and the C++ (optree) variant."""
from __future__ import annotations

import dataclasses
import functools
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

from .. import return_types as _return_types
from .._shape import Size as _Size
from ._pytree_spec import (BUILTIN_TYPES, STANDARD_DICT_TYPES, SUPPORTED_NODES,  # noqa: F401
                           _LEAF_SPEC, _STRUCTSEQS, LeafSpec, NodeDef, TreeSpec, _get_node_type,
                           is_namedtuple_class)

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext",
           "ToDumpableContextFn", "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec",
           "keystr", "key_get", "register_pytree_node", "tree_is_leaf", "tree_flatten",
           "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_pprint", "is_namedtuple",
           "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
           "is_structseq_class", "is_structseq_instance"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
KeyEntry = Any                 # SequenceKey, MappingKey, GetAttrKey or a custom key
KeyPath = tuple[KeyEntry, ...]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[KeyEntry, Any]], Any]]


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make `cls` a node: flatten_fn(obj) -> (children, context) and
    unflatten_fn(children, context) -> obj. The serialization arguments are accepted as
    PyTorch's are; treespec serialization itself is absent."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None,
                          *, serialized_type_name=None, to_dumpable_context=None,
                          from_dumpable_context=None, flatten_with_keys_fn=None):
    """PyTorch's deprecated spelling: it warns and overwrites an earlier registration."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning,
                  stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use "
                      "`to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, to_dumpable_context=None,
                                  from_dumpable_context=None, flatten_with_keys_fn=None):
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                         "be None or registered.")
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous "
                      "registration.", stacklevel=3)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    """Undo a registration (PyTorch's private helper; tests use it to clean up)."""
    del SUPPORTED_NODES[cls]
    _STRUCTSEQS.discard(cls)


# -- key paths ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(Generic[T]):
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey(Generic[K, T]):
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp) -> str:
    """A key path as PyTorch prints it: `[0]['a'].x`."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path `kp` in `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# -- namedtuple and structseq recognition ---------------------------------------------------

def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls) -> bool:
    """CPython's PyStructSequence (os.stat_result, time.struct_time): a final direct tuple
    subclass with n_fields."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & (1 << 10))       # Py_TPFLAGS_BASETYPE


def is_structseq(obj) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj) -> bool:
    return is_structseq_class(type(obj))


# -- the built-in nodes ------------------------------------------------------------------

def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _map_keys(keys, values):
    return [(MappingKey(k), v) for k, v in zip(keys, values)]


def _dict_unflatten(values, keys):
    return dict(zip(keys, values))


def _defaultdict_keys(d):
    return _map_keys(d.keys(), d.values()), [d.default_factory, list(d.keys())]


def _namedtuple_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(type(d)._fields, d)], type(d)


def _register_sequence(cls, unflatten):
    """A node whose children are its items and whose context is None (positional keys)."""
    _private_register_pytree_node(cls, lambda d: (list(d), None), unflatten,
                                  flatten_with_keys_fn=lambda d: (_seq_keys(d), None))


_register_sequence(tuple, lambda values, _: tuple(values))
_private_register_pytree_node(list, lambda d: (d, None), lambda values, _: list(values),
                              flatten_with_keys_fn=lambda d: (_seq_keys(d), None))
_private_register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())), _dict_unflatten,
                              flatten_with_keys_fn=lambda d: (_map_keys(d.keys(), d.values()),
                                                              list(d.keys())))
_private_register_pytree_node(namedtuple, lambda d: (list(d), type(d)),
                              lambda values, cls: cls(*values),
                              flatten_with_keys_fn=_namedtuple_keys)
_private_register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                              lambda values, keys: OrderedDict(zip(keys, values)),
                              flatten_with_keys_fn=lambda d: (_map_keys(d.keys(), d.values()),
                                                              list(d.keys())))
_private_register_pytree_node(defaultdict,
                              lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                              lambda values, ctx: defaultdict(ctx[0], zip(ctx[1], values)),
                              flatten_with_keys_fn=_defaultdict_keys)
_private_register_pytree_node(deque, lambda d: (list(d), d.maxlen),
                              lambda values, maxlen: deque(values, maxlen=maxlen),
                              flatten_with_keys_fn=lambda d: (_seq_keys(d), d.maxlen))
# PyTorch registers torch.Size on import (its unflatten gives a plain tuple, as here)
_register_sequence(_Size, lambda values, _: tuple(values))
for _cls in vars(_return_types).values():
    if is_namedtuple_class(_cls):
        _register_sequence(_cls, lambda values, _, cls=_cls: cls(*values))
        _STRUCTSEQS.add(_cls)


def tree_is_leaf(tree, is_leaf=None) -> bool:
    """Whether `tree` is a leaf: is_leaf says so, or its type is no registered node."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


PyTreeSpec = TreeSpec


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# -- flattening and mapping --------------------------------------------------------------

def _flatten(node, is_leaf, leaves):
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return _LEAF_SPEC
    t = _get_node_type(node)
    nd = SUPPORTED_NODES.get(t)
    if nd is None:
        leaves.append(node)
        return _LEAF_SPEC
    children, context = nd.flatten_fn(node)
    return TreeSpec(t, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """(leaves, treespec): the leaves in order and the structure that rebuilds the tree."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The tree of `treespec` with `leaves` in place (the arguments may come swapped)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item "
                            f"of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves, lazily."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def _collect(node, is_leaf, out):
    if tree_is_leaf(node, is_leaf):
        out.append(node)
        return
    for child in SUPPORTED_NODES[_get_node_type(node)].flatten_fn(node)[0]:
        _collect(child, is_leaf, out)


def tree_leaves(tree, is_leaf=None):
    """The leaves in order (no spec built)."""
    out = []
    _collect(tree, is_leaf, out)
    return out


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs):
    """tree_leaves((args, kwargs)) without building the tuple."""
    out = []
    for a in (*args, *kwargs.values()):
        _collect(a, None, out)
    return out


def tree_map(func, tree, *rests, is_leaf=None):
    """A tree of tree's structure with func(leaf, *matching leaves of rests) at each leaf;
    each of rests has tree's structure or tree as a prefix."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]))


def tree_map_(func, tree, *rests, is_leaf=None):
    """tree_map for func's side effect: returns `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    deque(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: the function applies to leaves of the type(s) (or passing the
    predicate) and returns any other leaf unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def treespec_pprint(treespec) -> str:
    """The spec's tree with `*` at each leaf, as repr prints it."""
    return repr(treespec.unflatten([_STAR] * treespec.num_leaves))


class _Star(str):
    __slots__ = ()

    def __repr__(self):
        return "*"


_STAR = _Star("*")


# -- key paths over trees ------------------------------------------------------------------

def _key_paths(path, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    t = _get_node_type(tree)
    nd = SUPPORTED_NODES.get(t)
    if nd is None:
        yield path, tree
        return
    if nd.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {t}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    for k, child in nd.flatten_with_keys_fn(tree)[0]:
        yield from _key_paths((*path, k), child, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], treespec); a custom node needs a flatten_with_keys_fn."""
    spec = tree_structure(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """tree_map whose func gets each leaf's key path first: func(path, leaf, *others)."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(p, x, *o) for (p, x), *o in zip(pairs, *others))

