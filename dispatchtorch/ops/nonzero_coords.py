"""nonzero and argwhere: the coordinates of a tensor's non-zero elements.

Apart from gather_scatter.py (which re-exports them) because they sit below pointwise:
where(condition) is nonzero(condition, as_tuple=True), while gather_scatter's rules use
pointwise's where (see the ops/ layers in pyproject.toml)."""
from __future__ import annotations

from .. import _dtype as D
from .._run import apply, decompose
from ..dispatch.registry import Forms, form_of, prim_row
from ._composite import composite, written_forms
from . import creation
from ._out import takes_out
from ._bare_support import check_op as bare_check

ONLY = Forms(written=True, inplace=False)
NONZERO = prim_row("nonzero", kind="indexing", data_dependent=True, forms=ONLY)


@form_of(NONZERO)
@takes_out("nonzero", "exact", "any")
def nonzero(input, *, out=None, as_tuple=False):
    if input._dtype.bare:
        bare_check("nonzero", input._dtype)
    count = int((input != 0).sum().item())
    place = input._place
    coords = apply(NONZERO, place, (input,), (input._h,), (((count, input.dim()), D.int64),))
    if as_tuple:
        if input.dim() == 0:
            return (coords.reshape(-1) if count == 0 else creation.zeros(count, dtype=D.int64,
                                                                     device=input.device),)
        return tuple(coords[:, i] for i in range(input.dim()))
    return coords


ARGWHERE = composite("argwhere", kind="indexing", decomp=lambda x: nonzero(x), forms=ONLY,
                     differentiable=False, signature="argwhere(x)",
                     doc="the coordinates of the non-zero elements, one row each")


@form_of(ARGWHERE)
def argwhere(input):
    return decompose(ARGWHERE, (input,), {})


# the function forms (torch.nonzero, torch.argwhere) and the Tensor methods, from the rows
FUNCTIONS, _ = written_forms(vars())
PUBLIC = METHODS = FUNCTIONS
