"""Memory ops: clone, dtype casts, device transfers, fill and concatenation. They run
on the backend's memory methods (copy_, fill_, from_host, to_host), not kernels."""
import dispatchtorch as torch

from .. import samples as S
from ..case import Case
from ..dtypes import ALL, INTEGRAL


def _cast_samples(g):
    """x.to(each dtype). Float -> integer casts of NaN, inf or out-of-range values
    are undefined in C (and differ between PyTorch's devices): integer targets get
    values they can hold; a fractional part must truncate toward zero."""
    def cast(name, x, dst):
        return g.sample(name, x, dst).needs_dtypes(dst)
    for dst in ALL:
        if g.floating and dst in INTEGRAL:
            lo = 0 if dst == "uint8" else -100
            yield cast(f"to-{dst}", g.arr((7, 13), lo, 100), dst)
            yield cast(f"to-{dst}-T", g.arr((5, 6), lo, 100, layout="T"), dst).skip_checks("grad")
        else:
            yield cast(f"to-{dst}", g.arr((7, 13)), dst)
            yield cast(f"to-{dst}-extremes", g.special(layout="step"), dst).skip_checks("grad")
    yield cast("0d", g.arr(()), "float64" if g.dtype != "float64" else "int32")
    yield cast("empty", g.arr((0, 4)), "int64" if g.dtype != "int64" else "float16")
    big = g.arr(S.LARGE, 0, 100)
    yield cast("large", big, "float32" if g.dtype != "float32" else "int32") \
        .skip_checks(*S.NO_LARGE)


def _cast(x, name):
    return x.to(getattr(torch, name))


def _fill_samples(g):
    a = g.arr
    v = 3 if not g.is_bool else True
    yield g.sample("contig", a((7, 13)), v)
    yield g.sample("float-value", a((4, 5)), -1.5)
    yield g.sample("bool-value", a((4, 5)), True)
    yield g.sample("0d", a(()), v)
    yield g.sample("empty", a((0, 3)), v)
    yield g.sample("T", a((5, 6), layout="T"), v)
    yield g.sample("step", a((4, 9), layout="step"), v)
    yield g.sample("offset", a((4, 5), layout="offset"), v)
    yield g.sample("large", a(S.LARGE), v).skip_checks(*S.NO_LARGE)
    if g.floating:
        yield g.sample("nan", a((3, 4)), float("nan"))
        yield g.sample("-inf", a((3, 4)), float("-inf"))


def _cat_samples(g):
    a = g.arr
    yield g.sample("dim0", [a((2, 3)), a((4, 3))])
    yield g.sample("dim-1", [a((3, 2)), a((3, 5)), a((3, 1))], -1)
    yield g.sample("one", [a((2, 3))], 1)
    yield g.sample("legacy-empty", [a((0,)), a((2, 3)), a((0,))])
    yield g.sample("empty", [a((0, 3)), a((0, 3))])
    yield g.sample("views", [a((3, 4), layout="T"), a((2, 4), layout="step"),
                             a((1, 4), layout="expand")])
    other = S.PROMOTE_PARTNER[g.dtype]
    yield g.sample(f"promote-{other}", [a((2, 3)), a((1, 3), dtype=other)])
    yield g.sample("large", [a(S.LARGE), a((3, S.LARGE[1]))]).skip_checks(*S.NO_LARGE)
    yield g.sample("0d", [a(()), a(())]).raises(RuntimeError)
    yield g.sample("sizes-differ", [a((2, 3)), a((2, 4))]).raises(RuntimeError)
    yield g.sample("empty-list", []).raises(ValueError)


def _stack_samples(g):
    a = g.arr
    yield g.sample("dim0", [a((2, 3)), a((2, 3))])
    yield g.sample("dim-1", [a((3,), layout="offset"), a((3,))], -1)
    yield g.sample("0d", [a(()), a(()), a(())])
    yield g.sample("shapes-differ", [a((2, 3)), a((3, 2))]).raises(RuntimeError)


def _transfer_samples(g):
    for name, arr in (("0d", g.arr(())), ("prime", g.arr((7, 13))), ("empty", g.arr((0, 5))),
                      ("T", g.arr((5, 7), layout="T")), ("step", g.arr((4, 9), layout="step")),
                      ("expand", g.arr((4, 6), layout="expand")), ("extremes", g.special())):
        yield g.sample(name, arr)
    yield g.sample("large", g.arr(S.LARGE)).skip_checks(*S.NO_LARGE)


CASES = [
    Case("clone", torch.clone, S.unary()),
    Case("clone", lambda x: x.contiguous(), S.unary(), name="contiguous"),
    Case("to_dtype", _cast, _cast_samples),
    Case("to_device", lambda x: x.cpu().to(x.device), _transfer_samples),
    Case("to_device", lambda x: x.cpu(), _transfer_samples, name="to_cpu", out_device="cpu"),
    Case("fill", lambda x, v: x.fill_(v), _fill_samples, grad=False),
    Case("fill", lambda x: x.zero_(), S.unary(), name="zero_", grad=False),
    Case("cat", torch.cat, _cat_samples),
    Case("cat", torch.stack, _stack_samples, name="stack"),
]
