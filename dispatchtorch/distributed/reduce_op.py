"""ReduceOp: the reductions a collective applies, named as torch.distributed names them."""
from __future__ import annotations

import enum


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __str__(self):
        return f"RedOpType.{self.name}"


class ReduceOp:
    """`ReduceOp.SUM` and the rest are RedOpType members, as in PyTorch."""
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    RedOpType = RedOpType

    def __init__(self, op):
        if not isinstance(op, RedOpType):
            raise TypeError(f"ReduceOp: expected a RedOpType member, got {op!r}")
        self.op = op

    def __eq__(self, other):
        return self.op == (other.op if isinstance(other, ReduceOp) else other)

    def __hash__(self):
        return hash(self.op)


def check(op, what):
    """The engines' name of `op` (a RedOpType member, a ReduceOp): "sum", "avg", ...;
    TypeError naming `what` otherwise."""
    if isinstance(op, ReduceOp):
        return op.op.name.lower()
    if isinstance(op, RedOpType):
        return op.name.lower()
    raise TypeError(f"{what}: op must be a torch.distributed.ReduceOp (e.g. ReduceOp.SUM), "
                    f"got {type(op).__name__} {op!r}")
