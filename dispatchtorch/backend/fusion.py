"""What the optional fused-kernel hook receives: an elementwise region as data.

dispatchtorch.compile groups chains of elementwise prims over one iteration shape
into a FusedRegion and asks the backend (`Backend.fuse_elementwise`) for one kernel
computing it. Plain data, no numpy: a backend may turn it into C, a numexpr string,
a cupy ElementwiseKernel, or decline (return None) and the prims run one by one.
"""
from __future__ import annotations

from dataclasses import dataclass

# one argument of a FusedOp: ("in", i) the i-th input handle, ("tmp", j) the result of
# ops[j], ("const", python number) a literal of the op's input dtype
IN, TMP, CONST = "in", "tmp", "const"


# reductions a region may end in (a backend opts in through can_fuse)
REDUCTIONS = frozenset({"sum", "amax", "amin"})


@dataclass(frozen=True)
class FusedOp:
    op: str            # an elementwise prim's name, "relu", "cast" (C cast, as copy_), or
                       # a reduction (REDUCTIONS) of a region value
    args: tuple        # ((kind, value), ...), in the prim's argument order
    dtype: str         # the result's dtype (bool for comparisons)
    in_dtype: str      # the dtype the prim computes in (its inputs'; for where: a's)
    params: tuple = () # a reduction's (("dims", (d, ...)), ("keepdim", bool)), as its prim

    def operand_names(self, constant, inputs="i"):
        """Each argument's name in generated code: `inputs` + i for input i, t + j for
        ops[j]'s result, constant(value, position) for a literal (a backend's rendering)."""
        return [f"{inputs}{v}" if kind == IN else f"t{v}" if kind == TMP else constant(v, k)
                for k, (kind, v) in enumerate(self.args)]


@dataclass(frozen=True)
class FusedRegion:
    """Compute `ops` elementwise over `shape`; write ops[k] for k in `outputs` into
    the output handles (of `shape`: fresh C-contiguous buffers, or views written in
    place, never self-overlapping; an output may be one of the inputs too, read and
    written at the same element). Inputs are handles of `shape` (any strides, 0 for
    broadcast) of the dtypes `inputs`. The kernel is called as
    kernel(*outs, *ins); results must equal running the prims one by one (a
    transcendental from a vector math library may differ in its last bits, as the CPU
    backend's generated C does: document the bound). A reduction
    op's result is always an output, of `shape` reduced over its dims (no other op
    reads it)."""
    shape: tuple
    inputs: tuple      # dtype names
    ops: tuple         # FusedOp, in dependency order
    outputs: tuple     # indices into ops

    def key(self):
        """What the generated code depends on (the shape only through the backend's
        own launch geometry): a cache key. Constants also by repr: -0.0 == 0.0 and
        1 == 1.0 == True as numbers, not as generated code."""
        return (self.inputs, self.ops, self.outputs, len(self.shape),
                tuple(repr(v) for o in self.ops for kind, v in o.args if kind == CONST))
