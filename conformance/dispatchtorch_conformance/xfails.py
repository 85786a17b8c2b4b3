"""Expected-failure and skip lists, as a vendor ships them with a backend.

One entry per line: a pattern of result ids, then an optional reason after `#`:

    # erfinv is 3 ulp off in half precision on this device
    erfinv/float16                # every sample and check of the cell
    matmul/*/large                # the large sample of matmul, every dtype
    add/float32/bcast/grad        # one check of one sample
    contract/roundtrip/bfloat16

A pattern matches an id `case/dtype/sample/check` (contract checks:
`contract/name[/dtype]`) when it equals it, is a prefix of it at a `/`, or matches
it with fnmatch wildcards (`*`, `?`, `[...]`).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field


@dataclass
class Entry:
    pattern: str
    reason: str
    line: int

    def matches(self, rid: str) -> bool:
        p = self.pattern
        return rid == p or rid.startswith(p + "/") or fnmatch.fnmatchcase(rid, p) or \
            fnmatch.fnmatchcase(rid, p + "/*")


@dataclass
class PatternList:
    path: str = ""
    entries: list = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, path: str = "") -> "PatternList":
        entries = []
        for n, raw in enumerate(text.splitlines(), 1):
            body, _, reason = raw.partition("#")
            body = body.strip()
            if not body:
                continue
            if len(body.split()) != 1:
                raise ValueError(f"{path or 'patterns'}:{n}: one pattern per line, then '# reason'; "
                                 f"got {raw.strip()!r}")
            entries.append(Entry(body, reason.strip(), n))
        return cls(path, entries)

    @classmethod
    def load(cls, path) -> "PatternList":
        with open(path, encoding="utf-8") as f:
            return cls.parse(f.read(), str(path))

    def match(self, rid: str):
        for e in self.entries:
            if e.matches(rid):
                return e
        return None


def apply(results, xfails: PatternList):
    """Mark expected failures. A failing result matched by an entry becomes xfail; an
    entry that matched results none of which failed is stale, and its results become
    xpass (the vendor should remove it). Returns the entries that matched nothing.
    The entries themselves are not modified (one list serves many runs)."""
    if xfails is None or not xfails.entries:
        return []
    matched, failures = [], {}
    for r in results:
        e = xfails.match(r.id) if r.outcome != "skip" else None
        if e is not None:
            matched.append((r, e))
            failures[id(e)] = failures.get(id(e), 0) + (1 if r.failed else 0)
    for r, e in matched:
        label = f"{xfails.path or 'xfails'}:{e.line} {e.pattern}" + (f" ({e.reason})" if e.reason else "")
        if r.failed:
            r.expected_failure = label
            r.message = f"expected failure: {r.message}"
            r.outcome = "xfail"
        elif failures[id(e)] == 0:
            r.expected_failure = label
            r.outcome = "xpass"
            r.message = f"listed as an expected failure ({label}) but passed: remove the entry"
    return [e for e in xfails.entries if id(e) not in failures]
