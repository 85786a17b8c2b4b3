"""One verdict per check: what was run, the outcome and the evidence."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

# pass: equal to the reference. fail: a wrong value, dtype, shape, device, aliasing or
# error behaviour. error: an exception where the reference has none. crash / timeout:
# the isolated worker died or hung. skip: not run (reason in message). xfail / xpass:
# a listed expected failure that failed / passed.
OUTCOMES = ("pass", "fail", "error", "crash", "timeout", "skip", "xfail", "xpass")
FAILING = frozenset({"fail", "error", "crash", "timeout"})


@dataclass
class Result:
    case: str
    op: str
    dtype: str
    sample: str            # the sample's name, or "-" for a whole cell (skips, crashes)
    check: str             # forward | grad | inplace | alias | contract | "-"
    outcome: str
    message: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    rtol: float | None = None
    atol: float | None = None
    fallback: list = field(default_factory=list)   # prims that ran on the CPU instead
    decomposed: bool = False                       # a composite run as its decomposition
    seconds: float = 0.0
    expected_failure: str = ""                     # the xfails entry that matched
    prims: list = field(default_factory=list)      # "prim/dtype" run on the device by this check
    blame: list = field(default_factory=list)      # of those, the ones whose own cases fail
    max_ulp: float | None = None                   # worst distance from the reference, in ulp
    ulp_budget: float | None = None                # the budget that distance was held to
    ref_seconds: float = 0.0                       # the same check on the CPU reference

    @property
    def id(self):
        parts = [self.case]
        if self.dtype != "-":
            parts.append(self.dtype)
        if self.sample != "-":
            parts.append(self.sample)
        if self.check != "-":
            parts.append(self.check)
        return "/".join(parts)

    @property
    def failed(self):
        return self.outcome in FAILING

    def as_dict(self):
        d = asdict(self)
        d["id"] = self.id
        return d

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        d.pop("id", None)
        return cls(**d)


def counts(results) -> dict:
    c = {o: 0 for o in OUTCOMES}
    for r in results:
        c[r.outcome] += 1
    return c


def summary_line(results, seconds=None) -> str:
    """`N passed, N failed, N skipped` (+ the rarer outcomes when present)."""
    c = counts(results)
    failed = sum(c[o] for o in FAILING)
    detail = [f"{c[o]} {label}" for o, label in (("error", "raised"), ("crash", "crashed"),
                                                  ("timeout", "timed out")) if c[o]]
    parts = [f"{c['pass']} passed",
             f"{failed} failed" + (f" ({', '.join(detail)})" if detail else ""),
             f"{c['skip']} skipped"]
    for o, label in (("xfail", "xfailed"), ("xpass", "xpassed")):
        if c[o]:
            parts.append(f"{c[o]} {label}")
    line = ", ".join(parts)
    if seconds is not None:
        line += f" in {seconds:.1f}s"
    return line
