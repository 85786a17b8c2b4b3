"""torch.utils._pytree against PyTorch 2.13's: the same leaves in the same order, the same
spec reprs, key paths and errors, on built-in containers, namedtuples and a registered
class; torch.utils.hooks.RemovableHandle's extra dicts."""
import collections
import pickle

import pytest
from hypothesis import given, settings, strategies as st

import dispatchtorch as dt
import dispatchtorch.utils._pytree as ours

torch = pytest.importorskip("torch")
import torch.utils._pytree as theirs  # noqa: E402

Point = collections.namedtuple("Point", "x y")

TREES = [
    None, 1, (), [], {}, (1, 2), [1, [2, [3, []]]], {"b": 1, "a": [2, (3, None)]},
    {3: "x", 1: "y", "z": (4,)}, collections.OrderedDict([("z", 1), ("a", 2)]),
    collections.defaultdict(list, {"k": [1, 2]}), collections.deque([1, (2, 3)], maxlen=5),
    [Point(1, (2, 3)), Point([4], {"q": 5})], (dt.ones(2), [dt.zeros(1), {"t": dt.ones(3)}]),
    dt.return_types.max(dt.ones(1), dt.zeros(1)),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
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


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
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


def test_reached_from_the_package_as_in_pytorch():
    assert dt.utils._pytree is ours
    assert dt.utils.hooks.RemovableHandle is dt.nn.modules.module.RemovableHandle


def test_removable_handle_extra_dicts_and_pickle():
    hooks, extra = collections.OrderedDict(), collections.OrderedDict()
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
