"""Elementwise ops: unary math, rounding, binary arithmetic, comparisons, bitwise,
where and clamp. Ranges keep random values inside each op's smooth domain (so
gradients are finite); the "extremes" sample covers the rest (NaN, inf, -0.0...)."""
import dispatchtorch as torch
from dispatchtorch.dispatch import OPS
from dispatchtorch.dispatch.registry import operand_domains, sample_domains

from .. import samples as S
from ..case import Case

# op: (low, high) of the random values, inside the domain where the op and its
# gradient are finite: the op rows' sample domains (the unit tests read the same)
_DOMAINS = sample_domains("elementwise")
CASES = []


def _halves(g):
    """Exact halves: round() rounds them to even."""
    if g.floating:
        yield g.sample("halves", g.host([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]))


CASES += [
    # the rounding kernels get floats; the functions take integers too (a copy, as PyTorch)
    Case("floor", torch.floor, S.unary(*_DOMAINS["floor"]), dtypes="numeric"),
    Case("ceil", torch.ceil, S.unary(*_DOMAINS["ceil"]), dtypes="numeric"),
    Case("trunc", torch.trunc, S.unary(*_DOMAINS["trunc"]), dtypes="numeric"),
    Case("round", torch.round, S.plus(S.unary(*_DOMAINS["round"]), _halves), dtypes="numeric"),
    Case("round", lambda x: torch.round(x, decimals=2), S.unary(*_DOMAINS["round"]),
         name="round_decimals", dtypes="numeric"),
    Case("neg", torch.neg, S.unary(), inplace="neg_"),
    Case("abs", torch.abs, S.unary(), inplace="abs_"),
    Case("bitwise_not", torch.bitwise_not, S.unary(), inplace="bitwise_not_"),
    Case("relu", torch.relu, S.unary(), inplace="relu_"),
    Case("square", torch.square, S.unary(), inplace="square_"),
    Case("sign", torch.sign, S.unary(), inplace="sign_"),
]

# -- binary ---------------------------------------------------------------------------------


def _int_zero_divisor(g):
    """Integer division by zero raises (as PyTorch on the CPU)."""
    if not g.floating and not g.is_bool:
        yield g.sample("int-div-zero", g.arr((3,)), g.host([1, 0, 2])).raises(RuntimeError)


def _binary_domain(name, **kw):
    """S.binary over a binary row's sample domains (one range per operand)."""
    (low, high), (rlow, rhigh) = operand_domains(OPS[name])
    return S.binary(low, high, rlow=rlow, rhigh=rhigh, **kw)


_pow_samples = S.by_dtype(
    _binary_domain("pow", scalars=(2, 0.5, -1), rscalar=True),
    S.plus(S.binary(-3, 3, rlow=0, rhigh=4, scalars=(2, 0), rscalar=True, extremes=False),
           S.when(lambda g: not g.is_bool,
                  lambda g: [g.sample("neg-int-exponent", g.arr((3,)), -1)
                             .raises(RuntimeError)])))

CASES += [
    Case("add", torch.add, S.binary(), inplace="add_"),
    Case("add", lambda a, b: torch.add(a, b, alpha=2), S.binary(scalars=(3,)), name="add_alpha",
         inplace=lambda a, b: a.add_(b, alpha=2)),
    Case("sub", torch.sub, S.binary(), inplace="sub_"),
    Case("mul", torch.mul, S.binary(), inplace="mul_"),
    Case("div", torch.div, S.binary(), inplace="div_"),
    Case("div", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
         S.plus(S.binary(nonzero_rhs=True), _int_zero_divisor), name="div_trunc",
         dtypes="numeric"),
    Case("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"),
         S.plus(S.binary(nonzero_rhs=True), _int_zero_divisor), dtypes="numeric"),
    Case("fmod", torch.fmod, S.plus(S.binary(nonzero_rhs=True), _int_zero_divisor),
         inplace="fmod_"),
    Case("fmod", torch.remainder, S.plus(S.binary(nonzero_rhs=True), _int_zero_divisor),
         name="remainder"),
    Case("pow", torch.pow, _pow_samples),
    Case("xlogy", torch.xlogy, _binary_domain("xlogy"), inplace="xlogy_"),
    Case("maximum", torch.maximum, S.binary(), inplace="maximum_"),
    Case("minimum", torch.minimum, S.binary(), inplace="minimum_"),
    Case("atan2", torch.atan2, S.binary(), inplace="atan2_"),
    Case("bitwise_and", torch.bitwise_and, S.binary(scalars=(5, True)), inplace="bitwise_and_"),
    Case("bitwise_or", torch.bitwise_or, S.binary(scalars=(5, True)), inplace="bitwise_or_"),
    Case("bitwise_xor", torch.bitwise_xor, S.binary(scalars=(5, True)), inplace="bitwise_xor_"),
    Case("bitwise_left_shift", torch.bitwise_left_shift,
         S.binary(rlow=0, rhigh=6, scalars=(2,), extremes=False),
         inplace="bitwise_left_shift_"),
    Case("bitwise_right_shift", torch.bitwise_right_shift,
         S.binary(rlow=0, rhigh=6, scalars=(2,), extremes=False),
         inplace="bitwise_right_shift_"),
]
CASES += [Case(name, getattr(torch, name), S.binary(), inplace=name + "_")
          for name in ("eq", "ne", "lt", "le", "gt", "ge")]

# -- where and clamp -------------------------------------------------------------------------


def _where_samples(g):
    a, m = g.arr, g.mask
    yield g.sample("same", m((3, 4)), a((3, 4)), a((3, 4)))
    yield g.sample("0d", m(()), a(()), a(()))
    yield g.sample("bcast", m((3, 1)), a((1, 4)), a(()))
    yield g.sample("scalars", m((2, 5)), a((2, 5)), 0)
    yield g.sample("empty", m((0, 3)), a((0, 3)), a((3,)))
    yield g.sample("T-step", m((4, 6), layout="T"), a((4, 6), layout="step"), a((4, 6), layout="T"))
    yield g.sample("expand", m((5, 4), layout="T"), a((5, 4), layout="expand"), a((5, 4)))
    other = S.PROMOTE_PARTNER[g.dtype]
    yield g.sample(f"promote-{other}", m((3, 4)), a((3, 4)), a((3, 4), dtype=other))
    yield g.sample("large", m(S.LARGE), a(S.LARGE), a(S.LARGE[-1:])).skip_checks(*S.NO_LARGE)
    s = g.special()
    yield g.sample("extremes", m(s.shape), s, a(s.shape)).skip_checks("grad")
    yield g.sample("non-bool-cond", a((3,)), a((3,)), a((3,))).raises(RuntimeError) \
        if g.dtype not in ("bool", "uint8") else g.sample("uint8-cond", m((2,)), a((2,)), a((2,)))


def _clamp_samples(g):
    a = g.arr
    lo, hi = (-1.5, 2) if g.floating else (-2, 4)
    yield g.sample("both", a((5, 7)), lo, hi)
    yield g.sample("min", a((5, 7)), min=lo)
    yield g.sample("max", a((5, 7)), max=hi)
    yield g.sample("0d", a(()), lo, hi)
    yield g.sample("empty", a((0, 2)), lo, hi)
    yield g.sample("tensor-bounds", a((4, 6)), a((4, 1), -9, -1), a((6,), 1, 9))
    yield g.sample("min>max", a((3, 4)), hi, lo)
    yield g.sample("T", a((5, 7), layout="T"), lo, hi)
    yield g.sample("step", a((4, 6), layout="step"), lo, hi)
    yield g.sample("large", a(S.LARGE), lo, hi).skip_checks(*S.NO_LARGE)
    yield g.sample("extremes", g.special(), lo, hi).skip_checks("grad")
    yield g.sample("no-bounds", a((3,))).raises(RuntimeError)


CASES += [
    Case("where", torch.where, _where_samples),
    Case("clamp", torch.clamp, _clamp_samples, inplace="clamp_"),
]


# -- rows that declare their public forms: cases made from the row alone (its sample
# domain; the unit tests make theirs from the same rows). Rows any family's cases cover
# are left to them. The extreme values are the prims' samples only: a composite meets them
# through its prims, and PyTorch's own composites can trap there (lcm: INT_MIN / -1).
def derived_cases(covered):
    """The cases of the rows with a sample domain that no case covers (covered: the op
    names of every family's CASES; all_cases calls this): the float unary rows' (before
    this module's CASES), and those of the other rows with forms (after them)."""
    # the float unary rows (int_to_float): function and in-place forms over the domain
    unary_float = [
        Case(name, getattr(torch, name), S.unary(low, high), inplace=name + "_")
        for name, (low, high) in _DOMAINS.items()
        if OPS[name].promote == "int_to_float" and len(OPS[name].args) == 1
        and name not in covered]
    covered = covered | {c.op for c in unary_float}
    return unary_float, [
        Case(name, getattr(torch, name),
             S.unary(*op.domain, extremes=op.prim) if len(op.args) == 1
             else _binary_domain(name, scalars=(), extremes=op.prim),
             inplace=name + "_" if op.forms.inplace else None)
        for name, op in sorted(OPS.items())
        if op.forms is not None and op.kind == "elementwise" and op.domain is not None
        and name not in covered]
