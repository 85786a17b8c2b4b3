"""torch.utils.swap_tensors: two tensor objects exchange their contents, each keeping its
identity (what nn.Module conversion and load_state_dict use under
torch.__future__.set_swap_module_params_on_conversion).

A Tensor here keeps all its state (handle, geometry, autograd fields, user attributes) in
its __dict__, so exchanging __class__ and __dict__ is the whole swap (PyTorch also swaps
the C++ TensorImpl). PyTorch refuses when something else holds the TensorImpl (its use
count); here the holders that would see the other tensor's contents after the swap are
the ones holding the Python object inside the library: a view's `_base`, a tensor whose
`.grad` it is, a graph node or an autograd.Function's ctx that saved it, and graph edges
to it as a leaf (PyTorch's
AccumulateGrad node). They are found with gc.get_referrers (one scan of the heap, two or
three when some tuple holds the tensor: 5-10 ms each with 48k live objects; `prepared`
scans once for a whole module's parameters), and
counted as PyTorch counts them: the edges of a leaf requiring grad count once (its one
AccumulateGrad), and with nothing else holding it the swap goes ahead and those edges
are poisoned so that a backward through them raises, as PyTorch's pre-hook does.
"""
from __future__ import annotations

import copyreg
import gc
import weakref

from .._tensor import Tensor
from ..autograd.function import FunctionCtx
from ..autograd.graph import FREED, Node

__all__ = ["swap_tensors"]

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors "
             "this can happen when you try to run backward on a tensor that was swapped. "
             "For a module m with `torch.__future__.set_swap_module_params_on_conversion(True)` "
             "you should not change the device or dtype of the module (e.g. `m.cpu()` or "
             "`m.half()`) between running forward and backward. To resolve this, please only "
             "change the device/dtype before running forward (or after both forward and "
             "backward).")


def swap_tensors(t1, t2):
    """Swap the contents (class, attributes, data, autograd state) of t1 and t2."""
    _swap(t1, t2, None)


def prepared(tensors):
    """swap_tensors for pairs among `tensors`, with what holds each found by one heap scan
    for all of them (nn.Module's conversion swaps every parameter and gradient): valid
    while nothing else starts holding them."""
    holders = _holders(*tensors)
    return lambda t1, t2: _swap(t1, t2, holders)


def _swap(t1, t2, holders):
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t, name in ((t1, "t1"), (t2, "t2")):
        if not isinstance(t, Tensor):      # PyTorch fails on the missing `_use_count`
            raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
    if t1 is t2:
        holders = {id(t1): _Holders()}
    elif holders is None or id(t1) not in holders or id(t2) not in holders:
        holders = _holders(t1, t2)
    poison = []
    for t, name in ((t1, "t1"), (t2, "t2")):
        h = holders[id(t)]
        use_count = 1 + h.others + (1 if h.edges else 0)
        if use_count > 1:
            if use_count == 2 and t.is_leaf:
                if not t._rg:
                    raise RuntimeError("It is not possible to get the gradient edge for a Tensor "
                                       "that does not require gradients")
                if h.edges:
                    poison.append((t, h.edges))
                    continue
            raise RuntimeError(f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad "
                               f"node but got {use_count} make sure you are not holding "
                               f"references to the tensor in other places.")
    for t, nodes in poison:
        _poison(t, nodes)
    c1, c2 = t1.__class__, t2.__class__
    t1.__class__, t2.__class__ = c2, c1
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in t1_slots:
        _swap_slot(t1, t2, slot)


def _swap_slot(t1, t2, slot):
    has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
    if has1 and has2:
        a, b = getattr(t1, slot), getattr(t2, slot)
        setattr(t1, slot, b)
        setattr(t2, slot, a)
    elif has1:
        setattr(t2, slot, getattr(t1, slot))
        delattr(t1, slot)
    elif has2:
        setattr(t1, slot, getattr(t2, slot))
        delattr(t2, slot)


class _Holders:
    """What inside the library refers to one tensor object."""
    __slots__ = ("others", "edges")

    def __init__(self):
        self.others = 0      # views' _base, tensors' .grad, saved values: one count each
        self.edges = []      # nodes with an edge to the tensor as a leaf


def _holders(*tensors):
    found = {id(t): _Holders() for t in tensors}
    by_id = {id(t): t for t in tensors}
    containers = []     # tuples holding one of the tensors (a node's saved values and
    for r in gc.get_referrers(*tensors):        # edges are tuples)
        if isinstance(r, Tensor):       # its attributes (a __dict__ not materialized)
            r = vars(r)
        if isinstance(r, dict):
            if r is by_id:
                continue
            for key in ("_base", "_grad"):
                h = found.get(id(r.get(key)))
                if h is not None and isinstance(r.get("_shape"), tuple):
                    h.others += 1
        elif type(r) is tuple and r is not tensors:
            containers.append(r)
    if not containers:
        return found
    edge_tuples = [c for c in containers if type(c) is tuple and len(c) == 2
                   and id(c[0]) in by_id and type(c[1]) is int]
    for r in gc.get_referrers(*containers):
        if isinstance(r, FunctionCtx):  # an autograd.Function's save_for_backward
            r = vars(r)
        if isinstance(r, Node):
            saved = r.saved
        elif isinstance(r, dict) and type(r.get("_saved")) is tuple:
            saved = r["_saved"]
        else:
            continue
        if saved is not FREED and any(saved is c for c in containers):
            for v in saved:
                h = found.get(id(v))
                if h is not None and v is by_id[id(v)]:
                    h.others += 1
    if edge_tuples:
        next_tuples = [r for r in gc.get_referrers(*edge_tuples) if type(r) is tuple]
        if next_tuples:
            for node in gc.get_referrers(*next_tuples):
                if isinstance(node, Node) and any(node.next is n for n in next_tuples):
                    for e in node.next:
                        if e is not None and id(e[0]) in by_id and e[0] is by_id[id(e[0])]:
                            found[id(e[0])].edges.append(node)
    return found


def _poison(t, nodes):
    """Point the nodes' edges to t at a node that raises when the backward reaches it
    (PyTorch registers that pre-hook on t's AccumulateGrad node)."""
    poisoned = Node("accumulateGrad", _raise_poisoned, (), (), (), (), 1)
    for node in nodes:
        node.next = tuple((poisoned, 0) if e is not None and e[0] is t else e
                          for e in node.next)


def _raise_poisoned(grad):
    raise RuntimeError(_POISONED)
