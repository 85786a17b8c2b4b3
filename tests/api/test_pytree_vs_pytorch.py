"""torch.utils._pytree and torch.utils.hooks against PyTorch 2.13's. Each tree goes to
both implementations as the same Python objects: the same leaves (by identity) in the
same order, the same TreeSpec repr and counts, the same key paths, the same rebuilt
tree, tree_map results and errors; fixed trees and hypothesis' random nestings of every
built-in node. Also return types and Size as nodes, custom registration, the TreeSpec
API, RemovableHandle's removal / extra dicts / weak references / pickling, and lazy
loading."""
from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import subprocess
import sys
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dispatchtorch as dt
from dispatchtorch.utils import _pytree as ours
from dispatchtorch.utils import hooks as our_hooks

torch = pytest.importorskip("torch")
import torch.utils._pytree as theirs  # noqa: E402
import torch.utils.hooks as their_hooks  # noqa: E402

# comparing against ourselves would pass vacuously (dispatchtorch.as_torch aliases `torch`)
assert theirs.__name__ == "torch.utils._pytree" and "dispatchtorch" not in theirs.__file__
assert their_hooks.RemovableHandle is not our_hooks.RemovableHandle

Point = namedtuple("Point", ["x", "y"])
Empty = namedtuple("Empty", [])


class Leaf:
    """An opaque leaf whose repr is stable (the same object goes to both sides)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Leaf({self.name})"


A, B, C = Leaf("a"), Leaf("b"), Leaf("c")

TREES = [
    1, None, "s", A, (), [], {}, OrderedDict(), defaultdict(list), deque(), Empty(),
    Point(1, 2), [None, 1, (), {}], ((1, 2), [3, {"x": 4}]),
    {"b": 1, "a": 2, 3: 4, (1, 2): 5, None: 6},             # unsorted, mixed keys
    {"z": None, "y": [None, ()], "x": {}},
    OrderedDict([("b", 1), ("a", [2, 3])]),
    defaultdict(list, {"b": A, "a": (B,)}),
    deque([1, [2, 3]], maxlen=5), deque([A, B]),
    Point(x=[1, 2], y={"k": Point(3, C)}),
    [[], (), {}, [[]], ([], {"e": ()})],
    {"m": OrderedDict(z=deque([defaultdict(int, q=Point(A, [B]))])), "a": [[[[C]]]]},
]


def _walk_types(tree):
    """The container types of a rebuilt tree, depth first (repr alone hides some)."""
    out = [type(tree)]
    if isinstance(tree, dict):
        for v in tree.values():
            out += _walk_types(v)
    elif isinstance(tree, (list, tuple, deque)):
        for v in tree:
            out += _walk_types(v)
    return out


def _compare(tree, is_leaf=None):
    """Flatten with both: the same leaves, spec, counts, paths and rebuilt tree."""
    ol, os_ = ours.tree_flatten(tree, is_leaf)
    tl, ts = theirs.tree_flatten(tree, is_leaf)
    assert [id(x) for x in ol] == [id(x) for x in tl]
    assert repr(os_) == repr(ts)
    assert (os_.num_leaves, os_.num_nodes, os_.num_children, os_.is_leaf()) == \
        (ts.num_leaves, ts.num_nodes, ts.num_children, ts.is_leaf())
    assert os_.context == ts.context
    assert (os_.type.__name__ if os_.type else None) == (ts.type.__name__ if ts.type else None)
    op = [(ours.keystr(k), id(v)) for k, v in ours.tree_flatten_with_path(tree, is_leaf)[0]]
    tp = [(theirs.keystr(k), id(v)) for k, v in theirs.tree_flatten_with_path(tree, is_leaf)[0]]
    assert op == tp
    assert [id(x) for x in ours.tree_leaves(tree, is_leaf)] == [id(x) for x in tl]
    assert [id(x) for x in ours.tree_iter(tree, is_leaf)] == [id(x) for x in tl]
    back, their_back = ours.tree_unflatten(ol, os_), theirs.tree_unflatten(tl, ts)
    assert repr(back) == repr(their_back) == repr(tree)
    assert _walk_types(back) == _walk_types(their_back)
    assert ours.treespec_pprint(os_) == theirs.treespec_pprint(ts)
    return os_, ts


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_matches_pytorch(tree):
    os_, _ = _compare(tree)
    assert os_ == ours.tree_structure(copy.deepcopy(tree))
    assert hash(os_) == hash(ours.tree_structure(copy.deepcopy(tree)))
    assert pickle.loads(pickle.dumps(os_)) == os_


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_tree_map_matches_pytorch(tree):
    def box(x):
        return ("boxed", x)
    assert repr(ours.tree_map(box, tree)) == repr(theirs.tree_map(box, tree))
    # a second tree with the first as a prefix: each leaf becomes a list
    other = theirs.tree_map(lambda x: [x, 0], tree)
    pair = lambda a, b: (a, b)   # noqa: E731
    assert repr(ours.tree_map(pair, tree, other)) == repr(theirs.tree_map(pair, tree, other))
    path = lambda k, x, *r: (ours.keystr(k), x, *r)   # noqa: E731
    tpath = lambda k, x, *r: (theirs.keystr(k), x, *r)   # noqa: E731
    assert repr(ours.tree_map_with_path(path, tree, other)) == \
        repr(theirs.tree_map_with_path(tpath, tree, other))
    seen, their_seen = [], []
    assert ours.tree_map_(seen.append, tree) is tree
    theirs.tree_map_(their_seen.append, tree)
    assert [id(x) for x in seen] == [id(x) for x in their_seen]


_leaves = st.one_of(st.integers(-3, 3), st.none(), st.text(max_size=2), st.sampled_from([A, B, C]))
_keys = st.one_of(st.integers(-4, 4), st.text(max_size=2))


def _nodes(children):
    return st.one_of(
        st.lists(children, max_size=4), st.lists(children, max_size=4).map(tuple),
        st.dictionaries(_keys, children, max_size=4),
        st.dictionaries(_keys, children, max_size=3).map(OrderedDict),
        st.dictionaries(_keys, children, max_size=3).map(lambda d: defaultdict(list, d)),
        st.lists(children, max_size=3).map(deque),
        st.tuples(children, children).map(lambda t: Point(*t)))


@settings(max_examples=150, deadline=None)
@given(st.recursive(_leaves, _nodes, max_leaves=12))
def test_random_trees_match_pytorch(tree):
    _compare(tree)
    assert repr(ours.tree_map(lambda x: [x], tree)) == repr(theirs.tree_map(lambda x: [x], tree))
    is_tuple = lambda x: isinstance(x, tuple)   # noqa: E731
    _compare(tree, is_leaf=is_tuple)


def test_unflatten_errors_match_pytorch():
    tree = [1, (2, {"a": 3})]
    os_, ts = ours.tree_structure(tree), theirs.tree_structure(tree)
    for leaves in (lambda: [1], lambda: (1, 2, 3, 4), lambda: iter([1, 2])):
        with pytest.raises(ValueError) as e1:
            ours.tree_unflatten(leaves(), os_)
        with pytest.raises(ValueError) as e2:
            theirs.tree_unflatten(leaves(), ts)
        assert str(e1.value) == str(e2.value)
        assert "has length" in str(e1.value) and "holds 3 items" in str(e1.value)
    with pytest.raises(TypeError) as e1:
        ours.tree_unflatten([1], 5)
    with pytest.raises(TypeError) as e2:
        theirs.tree_unflatten([1], 5)
    assert str(e1.value) == str(e2.value)
    assert ours.tree_unflatten(os_, [1, 2, 3]) == theirs.tree_unflatten(ts, [1, 2, 3])  # swapped


@pytest.mark.parametrize("tree,other", [
    ([1, 2], (1, 2)), ([1, 2], [1]), ({"a": 1}, {"b": 1}), (Point(1, 2), (1, 2)),
    (deque([1]), [1]), ({"a": 1}, [1]),
])
def test_tree_map_mismatch_errors_match_pytorch(tree, other):
    with pytest.raises(ValueError) as e1:
        ours.tree_map(lambda a, b: a, tree, other)
    with pytest.raises(ValueError) as e2:
        theirs.tree_map(lambda a, b: a, tree, other)
    assert str(e1.value) == str(e2.value)


def test_dict_kinds_and_deque_maxlen_are_compatible_like_pytorch():
    pair = lambda a, b: (a, b)   # noqa: E731
    for tree, other in [({"a": 1, "b": 2}, OrderedDict(b=3, a=4)),
                        (defaultdict(list, a=1), {"a": 2}),
                        (deque([1, 2], maxlen=4), deque([3, 4]))]:
        assert repr(ours.tree_map(pair, tree, other)) == repr(theirs.tree_map(pair, tree, other))


def test_predicates_and_map_only_match_pytorch():
    tree = {"a": [1, 2.5, "s"], "b": (None, 3, Point(4, 0.5))}
    for name in ("tree_all", "tree_any"):
        for pred in (lambda x: x is not None, lambda x: x == 3, bool):
            assert getattr(ours, name)(pred, tree) == getattr(theirs, name)(pred, tree)
    for name in ("tree_all_only", "tree_any_only"):
        for types, pred in ((int, lambda x: x > 0), (float, lambda x: x > 1), ((int, float), bool)):
            assert getattr(ours, name)(types, pred, tree) == \
                getattr(theirs, name)(types, pred, tree)
    for only in (int, (int, float), int | str, lambda x: x == 3):
        assert repr(ours.tree_map_only(only, lambda x: [x], tree)) == \
            repr(theirs.tree_map_only(only, lambda x: [x], tree))
        seen, their_seen = [], []
        ours.tree_map_only_(only, seen.append, tree)
        theirs.tree_map_only_(only, their_seen.append, tree)
        assert seen == their_seen
    with pytest.raises(TypeError):
        ours.tree_map_only(3, lambda x: x, tree)
    assert ours.arg_tree_leaves(1, [2], k=(3,)) == theirs.arg_tree_leaves(1, [2], k=(3,))
    for tree, is_leaf in ((None, None), ([], None), ([1], lambda x: isinstance(x, list))):
        assert ours.tree_is_leaf(tree, is_leaf) == theirs.tree_is_leaf(tree, is_leaf)


def test_tensors_are_leaves():
    ot = {"w": dt.ones(2, 3), "b": [dt.zeros(3), None], "s": dt.tensor(1.5)}
    tt = {"w": torch.ones(2, 3), "b": [torch.zeros(3), None], "s": torch.tensor(1.5)}
    (ol, os_), (tl, ts) = ours.tree_flatten(ot), theirs.tree_flatten(tt)
    assert repr(os_) == repr(ts)
    assert all(x is y for x, y in zip(ol, [ot["w"], ot["b"][0], None, ot["s"]]))
    for a, b in zip(ours.tree_leaves(ours.tree_map_only(dt.Tensor, lambda t: t * 2, ot)),
                    theirs.tree_leaves(theirs.tree_map_only(torch.Tensor, lambda t: t * 2, tt))):
        assert (a is None and b is None) or np.array_equal(a.numpy(), b.numpy())
    assert ours.tree_all_only(dt.Tensor, lambda t: t.dtype == dt.float32, ot)


def test_return_types_and_size_are_nodes_as_in_pytorch():
    ox, tx = dt.tensor([[1.0, 3.0], [2.0, 0.0]]), torch.tensor([[1.0, 3.0], [2.0, 0.0]])
    for ours_r, theirs_r in [(dt.max(ox, 1), torch.max(tx, 1)), (dt.sort(ox), torch.sort(tx)),
                             (dt.linalg.eigh(ox @ ox.T), torch.linalg.eigh(tx @ tx.T)),
                             (ox.shape, tx.shape)]:
        (ol, os_), (tl, ts) = ours.tree_flatten([ours_r]), theirs.tree_flatten([theirs_r])
        assert repr(os_) == repr(ts)
        assert [ours.keystr(k) for k, _ in ours.tree_flatten_with_path([ours_r])[0]] == \
            [theirs.keystr(k) for k, _ in theirs.tree_flatten_with_path([theirs_r])[0]]
        back, their_back = ours.tree_unflatten(ol, os_)[0], theirs.tree_unflatten(tl, ts)[0]
        assert type(back).__name__ == type(their_back).__name__   # Size comes back a tuple
        assert type(back) is (tuple if isinstance(ours_r, dt.Size) else type(ours_r))


def test_none_and_empty_containers_like_pytorch():
    for tree in (None, [None], (), {}, [(), []]):
        _compare(tree)
    assert ours.tree_structure(None).is_leaf() and ours.tree_leaves([None, ()]) == [None]


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __repr__(self):
        return f"Pair({self.first!r}, {self.second!r})"


def _pair_flatten(p):
    return [p.first, p.second], "ctx"


def _pair_unflatten(values, context):
    return Pair(*values)


def _pair_keys(p):
    return [(ours.GetAttrKey("first"), p.first), (ours.GetAttrKey("second"), p.second)], "ctx"


def _their_pair_keys(p):
    return [(theirs.GetAttrKey("first"), p.first), (theirs.GetAttrKey("second"), p.second)], "ctx"


@pytest.fixture
def pair_registered():
    ours.register_pytree_node(Pair, _pair_flatten, _pair_unflatten,
                              serialized_type_name="test.Pair", flatten_with_keys_fn=_pair_keys)
    theirs.register_pytree_node(Pair, _pair_flatten, _pair_unflatten,
                                serialized_type_name="test.Pair",
                                flatten_with_keys_fn=_their_pair_keys)
    yield
    ours._deregister_pytree_node(Pair)
    theirs._deregister_pytree_node(Pair)


def test_custom_node_matches_pytorch(pair_registered):
    tree = {"p": Pair([1, A], Pair(B, None)), "q": 2}
    _compare(tree)
    assert Pair in ours.SUPPORTED_NODES and ours.SUPPORTED_NODES[Pair].flatten_fn is _pair_flatten
    assert repr(ours.tree_map(str, tree)) == repr(theirs.tree_map(str, tree))
    for mod in (ours, theirs):
        with pytest.raises(ValueError, match="already registered as pytree node"):
            mod.register_pytree_node(Pair, _pair_flatten, _pair_unflatten)
    with pytest.raises(ValueError) as e1:
        ours.tree_map(lambda a, b: a, tree, {"p": [1, 2], "q": 2})
    with pytest.raises(ValueError) as e2:
        theirs.tree_map(lambda a, b: a, tree, {"p": [1, 2], "q": 2})
    assert str(e1.value) == str(e2.value)
    assert Pair not in ours.tree_leaves(tree)


def test_custom_node_without_keys_and_deprecated_register():
    class NoKeys:
        def __init__(self, v):
            self.v = v
    for mod in (ours, theirs):
        with pytest.warns(FutureWarning, match="_register_pytree_node` is deprecated"):
            mod._register_pytree_node(NoKeys, lambda n: ([n.v], None), lambda vs, _: NoKeys(*vs))
        try:
            assert mod.tree_leaves([NoKeys(3)]) == [3]
            with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
                mod.tree_flatten_with_path([NoKeys(3)])
            with pytest.warns(UserWarning, match="Overwriting the previous registration"), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                mod._register_pytree_node(NoKeys, lambda n: ([], n.v), lambda vs, c: NoKeys(c))
            assert mod.tree_leaves([NoKeys(3)]) == []
        finally:
            mod._deregister_pytree_node(NoKeys)
        with pytest.raises(ValueError, match="must be None or registered"):
            mod.register_pytree_node(NoKeys, _pair_flatten, _pair_unflatten,
                                     to_dumpable_context=str)


def test_treespec_api_matches_pytorch():
    tree = [1, (2, {"a": 3})]
    os_, ts = ours.tree_structure(tree), theirs.tree_structure(tree)
    assert (os_.type, ts.type) == (list, list)
    assert repr(os_.child(1)) == repr(ts.child(1)) and len(os_.children()) == len(ts.children())
    for spec in (os_, ts):
        with pytest.warns(FutureWarning, match="children_specs` is deprecated"):
            assert len(spec.children_specs) == 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            spec.type = tuple
    for mod in (ours, theirs):
        with pytest.warns(FutureWarning, match="LeafSpec"):
            leaf = mod.LeafSpec()
        assert repr(leaf) == "*" and leaf == mod.tree_structure(1) and leaf.is_leaf()
        assert mod.TreeSpec(None, None, []) != leaf and mod.TreeSpec(None, None, []).is_leaf()
        assert isinstance(mod.tree_structure(1), mod.TreeSpec)
        assert mod.tree_structure([1]) != mod.tree_structure((1,))
        assert mod.tree_structure({"a": 1, "b": 2}) != mod.tree_structure({"b": 1, "a": 2})
    assert repr(ours.treespec_tuple([ours.treespec_leaf()])) == \
        repr(theirs.treespec_tuple([theirs.treespec_leaf()]))
    assert repr(ours.treespec_dict({"b": ours.treespec_leaf()}, a=ours.treespec_leaf())) == \
        repr(theirs.treespec_dict({"b": theirs.treespec_leaf()}, a=theirs.treespec_leaf()))


def test_keys_match_pytorch():
    for cls, arg in (("SequenceKey", 0), ("MappingKey", "a"), ("MappingKey", 3),
                     ("GetAttrKey", "x")):
        o, t = getattr(ours, cls)(arg), getattr(theirs, cls)(arg)
        assert (repr(o), str(o)) == (repr(t), str(t))
        assert o == getattr(ours, cls)(arg) and hash(o) == hash(getattr(ours, cls)(arg))
        assert pickle.loads(pickle.dumps(o)) == o
    tree = {"a": [0, Point(1, {"k": 2})]}
    for (op, ov), (tp, tv) in zip(ours.tree_leaves_with_path(tree),
                                  theirs.tree_leaves_with_path(tree)):
        assert ours.keystr(op) == theirs.keystr(tp) and ov == tv
        assert ours.key_get(tree, op) == ov


class LooksLikeStructseq(tuple):
    """Has structseq's counts but can be subclassed: not a structseq."""
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0


def test_namedtuple_and_structseq_recognition_match_pytorch():
    import os
    for obj in (Point(1, 2), Point, (1, 2), tuple, os.stat("."), type(os.stat(".")), 3, Empty,
                LooksLikeStructseq, LooksLikeStructseq((1, 2))):
        for name in ("is_namedtuple", "is_namedtuple_instance", "is_namedtuple_class",
                     "is_structseq", "is_structseq_instance", "is_structseq_class"):
            assert getattr(ours, name)(obj) == getattr(theirs, name)(obj), (name, obj)


# -- torch.utils.hooks ---------------------------------------------------------------------

def _handle_story(H):
    """One scenario of removals, run with either implementation; returns what it saw."""
    seen = []
    d, e1, e2 = OrderedDict(), OrderedDict(), OrderedDict()   # plain dicts take no weakref
    h = H(d, extra_dict=[e1, e2])
    h2 = H(d, extra_dict=e1)
    seen.append(h2.id - h.id)
    d[h.id] = d[h2.id] = e1[h.id] = e2[h.id] = e1[h2.id] = "hook"
    h.remove()
    seen.append((list(d) == [h2.id], list(e1) == [h2.id], len(e2)))
    h.remove()                                     # twice is harmless
    with h2 as same:
        seen.append(same is h2)
    seen.append((len(d), len(e1)))
    gone = OrderedDict()
    h3 = H(gone)
    del gone
    gc.collect()
    h3.remove()                                    # a dead dict: nothing to do
    seen.append(h3.hooks_dict_ref() is None)
    d4, e4 = OrderedDict(), OrderedDict()
    h4 = H(d4, extra_dict=e4)
    d4[h4.id] = e4[h4.id] = 1
    d4b, e4b, h4b = pickle.loads(pickle.dumps((d4, e4, h4)))
    seen.append((h4b.id == h4.id, H.next_id > h4.id))
    h4b.remove()
    seen.append((len(d4b), len(e4b), len(d4), len(e4)))
    h5 = pickle.loads(pickle.dumps(H(OrderedDict())))   # its dict did not survive
    seen.append(h5.hooks_dict_ref() is None)
    h5.remove()
    return seen


def test_removable_handle_matches_pytorch():
    assert _handle_story(our_hooks.RemovableHandle) == _handle_story(their_hooks.RemovableHandle)
    h = our_hooks.RemovableHandle(OrderedDict())
    assert len(h.__getstate__()) == len(their_hooks.RemovableHandle(OrderedDict()).__getstate__())


def test_module_hooks_return_the_handle():
    m = dt.nn.Linear(2, 2)
    h = m.register_forward_hook(lambda *a: None)
    assert isinstance(h, our_hooks.RemovableHandle)
    assert dt.nn.modules.module.RemovableHandle is our_hooks.RemovableHandle
    assert h.id in m._forward_hooks
    h.remove()
    assert h.id not in m._forward_hooks


def _hook(grad):
    return grad


def test_unserializable_hook_and_warn_if_has_hooks_match_pytorch():
    marked = lambda g: g   # noqa: E731
    assert our_hooks.unserializable_hook(marked) is marked and marked.__torch_unserializable__
    for lib, hooks in ((dt, our_hooks), (torch, their_hooks)):
        leaf = lib.ones(2, requires_grad=True)
        mid = leaf * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            hooks.warn_if_has_hooks(leaf)
            hooks.warn_if_has_hooks(mid)
        assert not w
        leaf.register_hook(_hook)
        mid.register_hook(_hook)
        mid.register_hook(hooks.unserializable_hook(lambda g: g))
        with pytest.warns(UserWarning) as w:
            hooks.warn_if_has_hooks(leaf)
            hooks.warn_if_has_hooks(mid)
        assert [str(x.message) for x in w] == [
            f"backward hook {_hook!r} on tensor will not be serialized.  If this is expected, "
            "you can decorate the function with @torch.utils.hooks.unserializable_hook to "
            "suppress this warning"] * 2


# -- loading and names ---------------------------------------------------------------------

def test_loaded_on_first_use_as_in_pytorch():
    assert hasattr(torch.utils, "_pytree") and hasattr(torch.utils, "hooks")   # PyTorch's
    code = ("import sys, dispatchtorch as torch\n"
            "assert 'dispatchtorch.utils._pytree' not in sys.modules\n"
            "assert torch.utils._pytree.tree_leaves([1, (2,)]) == [1, 2]\n"
            "assert torch.utils.hooks.RemovableHandle\n"
            "import dispatchtorch.utils._pytree as pytree\n"
            "assert pytree is torch.utils._pytree\n"
            "from dispatchtorch import as_torch\n"
            "as_torch.install()\n"
            "import torch.utils._pytree as p, torch.utils.hooks as h\n"
            "assert p is pytree and h is sys.modules['dispatchtorch.utils.hooks']\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with pytest.raises(AttributeError):
        dt.utils.no_such_module    # noqa: B018


# -- more fixed and random trees, registration, handles ------------------------------------

MORE_TREES = [
    None, 1, (), [], {}, (1, 2), [1, [2, [3, []]]], {"b": 1, "a": [2, (3, None)]},
    {3: "x", 1: "y", "z": (4,)}, OrderedDict([("z", 1), ("a", 2)]),
    defaultdict(list, {"k": [1, 2]}), deque([1, (2, 3)], maxlen=5),
    [Point(1, (2, 3)), Point([4], {"q": 5})], (dt.ones(2), [dt.zeros(1), {"t": dt.ones(3)}]),
]


def test_return_type_is_a_structseq_node_as_in_pytorch():
    """PyTorch's return types are structseqs (a node per class, positional keys), not
    namedtuples: ours, built from the same leaves, flattens as torch.return_types.max."""
    values, indices = dt.ones(1), dt.zeros(1)
    tree = [dt.return_types.max(values, indices)]
    their_tree = [torch.return_types.max((values, indices))]
    leaves, spec = ours.tree_flatten(tree)
    tleaves, tspec = theirs.tree_flatten(their_tree)
    assert [id(x) for x in leaves] == [id(x) for x in tleaves] == [id(values), id(indices)]
    assert repr(spec) == repr(tspec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
        (tspec.num_leaves, tspec.num_nodes, tspec.num_children)
    rebuilt = ours.tree_unflatten(leaves, spec)
    assert type(rebuilt[0]) is dt.return_types.max and ours.tree_structure(rebuilt) == spec
    mine = [(ours.keystr(kp), id(v)) for kp, v in ours.tree_leaves_with_path(tree)]
    their = [(theirs.keystr(kp), id(v)) for kp, v in theirs.tree_leaves_with_path(their_tree)]
    assert mine == their == [("[0][0]", id(values)), ("[0][1]", id(indices))]
    for kp, v in ours.tree_leaves_with_path(tree):
        assert ours.key_get(tree, kp) is v


@pytest.mark.parametrize("tree", MORE_TREES, ids=range(len(MORE_TREES)))
def test_flatten_is_pytorchs(tree):
    leaves, spec = ours.tree_flatten(tree)
    tleaves, tspec = theirs.tree_flatten(tree)
    assert [id(x) for x in leaves] == [id(x) for x in tleaves]
    assert repr(spec) == repr(tspec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
        (tspec.num_leaves, tspec.num_nodes, tspec.num_children)
    rebuilt = ours.tree_unflatten(leaves, spec)
    assert type(rebuilt) is type(tree) and ours.tree_structure(rebuilt) == spec
    assert repr(ours.tree_flatten(rebuilt)[1]) == repr(tspec)


@pytest.mark.parametrize("tree", MORE_TREES, ids=range(len(MORE_TREES)))
def test_paths_are_pytorchs(tree):
    mine = [(ours.keystr(kp), id(v)) for kp, v in ours.tree_leaves_with_path(tree)]
    their = [(theirs.keystr(kp), id(v)) for kp, v in theirs.tree_leaves_with_path(tree)]
    assert mine == their
    for kp, v in ours.tree_leaves_with_path(tree):
        assert ours.key_get(tree, kp) is v


def _plain(x):
    """Containers -> comparable values; leaves (non-tensors here) as they are."""
    return repr(x)


NESTED = st.recursive(
    st.integers(-5, 5) | st.none() | st.text(max_size=2),
    lambda kids: (st.lists(kids, max_size=3) | st.tuples(kids, kids)
                  | st.dictionaries(st.text(max_size=2) | st.integers(0, 9), kids, max_size=3)
                  | st.builds(Point, kids, kids)),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(NESTED)
def test_random_trees_map_and_flatten_as_pytorch(tree):
    leaves, spec = ours.tree_flatten(tree)
    tleaves, tspec = theirs.tree_flatten(tree)
    assert leaves == tleaves and repr(spec) == repr(tspec)
    f = lambda v: (v, "seen")  # noqa: E731
    assert _plain(ours.tree_map(f, tree)) == _plain(theirs.tree_map(f, tree))
    is_int = lambda v: isinstance(v, int)  # noqa: E731
    assert ours.tree_any(is_int, tree) == theirs.tree_any(is_int, tree)
    assert ours.tree_all(is_int, tree) == theirs.tree_all(is_int, tree)
    assert _plain(ours.tree_map_only(int, lambda v: v * 10, tree)) == \
        _plain(theirs.tree_map_only(int, lambda v: v * 10, tree))
    is_list = lambda v: isinstance(v, list)  # noqa: E731
    assert ours.tree_leaves(tree, is_leaf=is_list) == theirs.tree_leaves(tree, is_leaf=is_list)


def test_tree_map_over_several_trees_and_mismatch():
    a, b = {"x": [1, 2], "y": 3}, {"x": [10, 20], "y": 30}
    assert ours.tree_map(lambda u, v: u + v, a, b) == theirs.tree_map(lambda u, v: u + v, a, b)
    for mod in (ours, theirs):
        with pytest.raises(ValueError):
            mod.tree_map(lambda u, v: u, a, {"x": [1], "y": 3})


def test_unflatten_errors_are_pytorchs():
    spec, tspec = ours.tree_structure([1, (2, 3)]), theirs.tree_structure([1, (2, 3)])
    for s in (spec, tspec):
        with pytest.raises(ValueError, match="has length 2 but the spec refers to a pytree that "
                                             "holds 3 items"):
            s.unflatten([1, 2])
    with pytest.raises(TypeError):
        ours.tree_unflatten([1], "not a spec")


def test_register_a_class():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for mod in (ours, theirs):
        mod.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"),
                                 lambda c, ctx: Pair(*c),
                                 flatten_with_keys_fn=lambda p: ([(mod.GetAttrKey("a"), p.a),
                                                                  (mod.GetAttrKey("b"), p.b)], "ctx"))
        with pytest.raises(ValueError, match="already registered"):
            mod.register_pytree_node(Pair, lambda p: ([], None), lambda c, ctx: None)
    tree = [Pair(1, (2, 3)), 4]
    assert repr(ours.tree_structure(tree)) == repr(theirs.tree_structure(tree))
    out = ours.tree_map(lambda v: v + 1, tree)
    assert (out[0].a, out[0].b, out[1]) == (2, (3, 4), 5)
    assert [ours.keystr(k) for k, _ in ours.tree_leaves_with_path(tree)] == \
        [theirs.keystr(k) for k, _ in theirs.tree_leaves_with_path(tree)]
    for mod in (ours, theirs):
        mod._deregister_pytree_node(Pair)


def test_reached_from_the_package_as_in_pytorch():
    assert dt.utils._pytree is ours
    assert dt.utils.hooks.RemovableHandle is dt.nn.modules.module.RemovableHandle


def test_removable_handle_extra_dicts_and_pickle():
    hooks, extra = OrderedDict(), OrderedDict()
    for RH in (dt.utils.hooks.RemovableHandle, torch.utils.hooks.RemovableHandle):
        h = RH(hooks, extra_dict=extra)
        hooks[h.id], extra[h.id] = "hook", "extra"
        h.remove()
        assert h.id not in hooks and h.id not in extra
    h = dt.utils.hooks.RemovableHandle(hooks, extra_dict=[extra])
    hooks[h.id] = extra[h.id] = 1
    state = pickle.loads(pickle.dumps((hooks, extra, h)))
    state[2].remove()
    assert not state[0] and not state[1] and h.id in hooks
