"""torch.cond(pred, true_fn, false_fn, operands): the branch pred picks, called on the
operands, with PyTorch 2.13's argument checks. The gradient flows through whatever the
taken branch computed. A tensor pred's value is read on the host, so under
dispatchtorch.compile it is a data-dependent read like `item()`: a graph break
(fullgraph=True raises naming cond), the call then running eagerly.

With a tensor pred PyTorch traces the branches and refuses, as
UncapturedHigherOrderOpError, a branch returning something other than tensors and ints,
an output aliasing an operand or another output, or a mutated operand; the taken
branch is checked for these here. Only it runs, so a difference between the two
branches' output structures or dtypes, which PyTorch's tracing also refuses, is not."""
from __future__ import annotations

from .._compile.errors import UncapturedHigherOrderOpError
from .._run import storage_of
from .._tensor import Tensor

_HEAD = ("This higher order operator doesn't work unless it is captured completely with "
         "torch.compile. Got graph break/error:\n\n")


def _check(pred, true_fn, false_fn, operands, leaves):
    """cond's _validate_input, with its messages."""
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(not isinstance(t, Tensor) for t in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")


def _refuse(what, explanation):
    return UncapturedHigherOrderOpError(
        f"{_HEAD}{what}\n  Higher Order Operator: torch.cond\n  Explanation: {explanation}")


def _check_outputs(out, leaves, versions):
    from ..utils import _pytree as pytree
    if any(t._version != v for t, v in zip(leaves, versions)):
        raise _refuse("Encountered input mutation during higher order op tracing",
                      "Higher order ops do not support input mutation.")
    seen = {id(storage_of(t)) for t in leaves}
    for x in pytree.tree_leaves(out):
        if x is None:
            raise _refuse("torch.cond: unsupported branch return type (constant non-int)",
                          "Constants returned from branches must be ints.")
        if not isinstance(x, (Tensor, int)):
            raise _refuse("HOP body output unsupported", "HigherOrderOperator body's output "
                          f"must consist of tensors or ints/bools only but got {type(x)}.")
        if isinstance(x, Tensor):
            if id(storage_of(x)) in seen:
                raise _refuse("Encountered aliasing during higher order op tracing",
                              "Higher order ops do not support aliasing.")
            seen.add(id(storage_of(x)))


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands). A Python bool, int or float
    pred picks the branch with no checks at all, as PyTorch's constant path does."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    from ..utils import _pytree as pytree      # loaded on first use, as in PyTorch
    leaves = pytree.tree_leaves(operands) if isinstance(operands, (tuple, list)) else [operands]
    _check(pred, true_fn, false_fn, operands, leaves)
    versions = [t._version for t in leaves]
    out = true_fn(*operands) if bool(pred) else false_fn(*operands)
    _check_outputs(out, leaves, versions)
    return out


PUBLIC = {"cond": cond}
