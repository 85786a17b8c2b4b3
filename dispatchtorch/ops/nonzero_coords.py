"""nonzero and argwhere: the coordinates of a tensor's non-zero elements.

Apart from gather_scatter.py (which re-exports them) because they sit below pointwise:
where(condition) is nonzero(condition, as_tuple=True), while gather_scatter's rules use
pointwise's where (see the ops/ layers in pyproject.toml)."""
from __future__ import annotations

from .. import _dtype as D
from .._run import apply, decompose
from ..dispatch import OpDef, register_op
from . import creation

NONZERO = register_op(OpDef("nonzero", kind="indexing", data_dependent=True))


def nonzero(input, *, out=None, as_tuple=False):
    count = int((input != 0).sum().item())
    place = input._place
    coords = apply(NONZERO, place, (input,), (input._h,), (((count, input.dim()), D.int64),))
    if as_tuple:
        if input.dim() == 0:
            return (coords.reshape(-1) if count == 0 else creation.zeros(count, dtype=D.int64,
                                                                     device=input.device),)
        return tuple(coords[:, i] for i in range(input.dim()))
    return coords


ARGWHERE = register_op(OpDef("argwhere", kind="indexing", decomp=lambda x: nonzero(x),
                             differentiable=False, signature="argwhere(x)",
                             doc="the coordinates of the non-zero elements, one row each"))


def argwhere(input):
    return decompose(ARGWHERE, (input,), {})
