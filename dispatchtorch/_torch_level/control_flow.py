"""torch.cond(pred, true_fn, false_fn, operands): the branch pred picks, called on the
operands, with PyTorch 2.13's argument checks. Eagerly there is nothing more to do: the
gradient flows through whatever the taken branch computed. A tensor pred's value is read
on the host, so under dispatchtorch.compile it is a data-dependent read like `item()`:
a graph break (fullgraph=True raises naming it), the call then running eagerly.

PyTorch traces both branches for a tensor pred and so also refuses branches whose
outputs differ in structure or dtype, alias or mutate an operand; only the taken
branch runs here, so those checks are not made (a program PyTorch accepts runs alike)."""
from __future__ import annotations

from .._tensor import Tensor
from ..utils import _pytree as pytree


def _check(pred, true_fn, false_fn, operands):
    """cond's _validate_input, with its messages."""
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(
            not isinstance(t, Tensor) for t in pytree.tree_leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands). A Python bool, int or float
    pred picks the branch with no checks at all, as PyTorch's constant path does."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    _check(pred, true_fn, false_fn, operands)
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


PUBLIC = {"cond": cond}
