"""The report: an op x dtype table, failure details and a summary, for the terminal,
as JSON (everything, machine-readable) and as Markdown (for a vendor to publish)."""
from __future__ import annotations

import datetime
import json
import math
import os
import platform
import sys
import textwrap
from dataclasses import dataclass, field

from . import __version__
from .dtypes import ALL, SHORT
from .results import FAILING, counts, summary_line

FORMAT = "dispatchtorch-conformance/1"
LEGEND = ("ok pass · FAIL wrong value, dtype, shape, aliasing or error behaviour · err raised "
          "where the reference does not · crash / hang (isolated worker died / timed out) · "
          "xfail expected failure · XPASS listed as expected failure but passed · skip · "
          "n/c dtype not claimed by the device · - the op does not take this dtype; "
          "suffix +f: a prim fell back to the CPU, +d: a composite ran as its decomposition")


@dataclass
class Cell:
    outcomes: set = field(default_factory=set)
    fallback: set = field(default_factory=set)
    decomposed: bool = False
    skip_reason: str = ""

    @property
    def status(self):
        o = self.outcomes
        for name, label in (("crash", "crash"), ("timeout", "hang"), ("fail", "FAIL"),
                            ("error", "err"), ("xpass", "XPASS"), ("xfail", "xfail"),
                            ("pass", "ok")):
            if name in o:
                return label
        if "does not claim" in self.skip_reason:
            return "n/c"
        return "skip"

    def text(self):
        s = self.status
        if s in ("ok", "FAIL", "err", "xfail", "XPASS"):
            marks = ("f" if self.fallback else "") + ("d" if self.decomposed else "")
            if marks:
                s += "+" + marks
        return s


def cells(results):
    """{case: {dtype: Cell}} in the order the cases ran."""
    table = {}
    for r in results:
        if r.case.startswith("contract/"):
            continue
        c = table.setdefault(r.case, {}).setdefault(r.dtype, Cell())
        c.outcomes.add(r.outcome)
        c.fallback.update(r.fallback)
        c.decomposed = c.decomposed or r.decomposed
        if r.outcome == "skip" and not c.skip_reason:
            c.skip_reason = r.message
    return table


def environment():
    import numpy
    env = {"python": sys.version.split()[0], "implementation": platform.python_implementation(),
           "platform": platform.platform(), "machine": platform.machine(),
           "cpu_count": os.cpu_count(), "numpy": numpy.__version__,
           "dispatchtorch_conformance": __version__,
           "argv": sys.argv, "time": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    try:
        import dispatchtorch
        env["dispatchtorch"] = getattr(dispatchtorch, "__version__", "?")
    except ImportError:         # pragma: no cover - dispatchtorch is a dependency
        pass
    for name in ("ml_dtypes", "scipy", "pyopencl", "cupy"):
        mod = sys.modules.get(name)
        if mod is not None:
            env[name] = getattr(mod, "__version__", "?")
    return env


@dataclass
class Report:
    backend: dict
    reference: dict
    results: list
    seconds: float
    options: dict = field(default_factory=dict)
    unused_xfails: list = field(default_factory=list)
    strict_xfail: bool = False

    @property
    def failed(self):
        bad = [r for r in self.results if r.failed]
        if self.strict_xfail:
            bad += [r for r in self.results if r.outcome == "xpass"]
        return bad

    def summary(self):
        return summary_line(self.results, self.seconds)

    def dtypes(self):
        seen = {r.dtype for r in self.results}
        return [d for d in ALL if d in seen]

    # -- JSON ------------------------------------------------------------------------
    def as_json(self):
        table = cells(self.results)
        return {
            "format": FORMAT,
            "backend": self.backend,
            "reference": self.reference,
            "environment": environment(),
            "options": self.options,
            "seconds": round(self.seconds, 3),
            "summary": {"line": self.summary(), **counts(self.results),
                        "failed": len(self.failed)},
            "cells": {case: {d: {"status": c.status, "fallback": sorted(c.fallback),
                                 "decomposed": c.decomposed}
                             for d, c in row.items()} for case, row in table.items()},
            "unused_xfails": [{"pattern": e.pattern, "line": e.line, "reason": e.reason}
                              for e in self.unused_xfails],
            "results": [_compact(r.as_dict()) for r in self.results],
        }

    def write_json(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.as_json(), f, indent=1, default=str)
            f.write("\n")

    # -- terminal --------------------------------------------------------------------
    def table_lines(self, markdown=False):
        table = cells(self.results)
        dts = self.dtypes()
        width = max([len(c) for c in table] + [4])
        if markdown:
            lines = ["| op | " + " | ".join(SHORT[d] for d in dts) + " |",
                     "|---|" + "---|" * len(dts)]
        else:
            lines = ["op".ljust(width) + "  " + " ".join(SHORT[d].ljust(7) for d in dts)]
        for case, row in table.items():
            texts = [row[d].text() if d in row else "-" for d in dts]
            if markdown:
                lines.append(f"| {case} | " + " | ".join(texts) + " |")
            else:
                lines.append(case.ljust(width) + "  " + " ".join(t.ljust(7) for t in texts))
        return lines

    def failure_lines(self, limit=None):
        bad = [r for r in self.results if r.outcome in FAILING or r.outcome == "xpass"]
        lines = []
        for r in bad[:limit]:
            err = ""
            if r.max_abs is not None:
                err = f" [max abs {_num(r.max_abs)}, max rel {_num(r.max_rel)}]"
            label = {"fail": "FAIL", "error": "ERROR", "crash": "CRASH", "timeout": "TIMEOUT",
                     "xpass": "XPASS"}[r.outcome]
            lines.append(f"{label} {r.id}{err}: {r.message}")
        if limit is not None and len(bad) > limit:
            lines.append(f"... and {len(bad) - limit} more (see the JSON report)")
        return lines

    def fallback_lines(self):
        prims = sorted({p for r in self.results for p in r.fallback})
        lines = []
        missing = self.backend.get("missing_prims") or []
        if missing:
            lines.append(f"prims without a kernel on '{self.backend['name']}' (they run on the "
                         f"CPU, copying in and out): {', '.join(missing)}")
        if prims:
            lines.append(f"fell back to the CPU during this run: {', '.join(prims)}")
        return lines

    def skip_lines(self):
        reasons = {}
        for r in self.results:
            if r.outcome == "skip":
                reasons[r.message] = reasons.get(r.message, 0) + 1
        return [f"{n} skipped: {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])]

    def contract_lines(self):
        rows = [r for r in self.results if r.case.startswith("contract/")]
        bad = [r for r in rows if r.outcome != "pass"]
        lines = [f"contract: {sum(r.outcome == 'pass' for r in rows)}/{len(rows)} checks pass"]
        lines += [f"  {r.outcome.upper()} {r.id}: {r.message}" for r in bad]
        return lines if rows else []

    def header(self):
        b = self.backend
        dev = next((d for d in b.get("devices", []) if f"{b['name']}:{d['index']}" ==
                    b.get("device_under_test") or b["name"] == "cpu"), None)
        line = f"backend {b['name']} {b.get('version', '')} ({b.get('distribution', '')})"
        if dev:
            line += f", device {b.get('device_under_test')}: {dev['name']}"
        return line

    def terminal(self, max_failures=30):
        out = [self.header(), ""]
        out += self.table_lines()
        out += [""] + textwrap.wrap(LEGEND, 100) + [""]
        out += self.contract_lines()
        fails = self.failure_lines(max_failures)
        if fails:
            out += ["", "failures:"] + fails
        out += [""] + self.fallback_lines() + self.skip_lines()
        for e in self.unused_xfails:
            out.append(f"unused expected-failure entry, line {e.line}: {e.pattern}")
        out += ["", self.summary()]
        return "\n".join(out)

    # -- Markdown --------------------------------------------------------------------
    def markdown(self, max_failures=500):
        b = self.backend
        env = environment()
        out = [f"# dispatchtorch conformance: `{b['name']}`", "",
               f"**{self.summary()}**", "",
               f"- backend: `{b['name']}` {b.get('version', '')} "
               f"(distribution `{b.get('distribution', '')}`), device under test "
               f"`{b.get('device_under_test')}`"]
        for d in b.get("devices", []):
            out.append(f"  - device {d['index']}: {d['name']} — dtypes {', '.join(d['dtypes'])}")
        out += [f"- reference: `cpu` {self.reference.get('version', '')}",
                f"- dispatchtorch {env.get('dispatchtorch')}, dispatchtorch-conformance "
                f"{__version__}, Python {env['python']}, numpy {env['numpy']}, "
                f"{env['platform']}",
                f"- run at {env['time']} in {self.seconds:.1f}s", "", "## Ops × dtypes", ""]
        out += self.table_lines(markdown=True)
        out += ["", LEGEND, ""]
        contract = self.contract_lines()
        if contract:
            out += ["## Backend contract", ""] + [f"- {c.strip()}" for c in contract] + [""]
        fails = self.failure_lines(max_failures)
        if fails:
            out += ["## Failures", ""] + [f"- `{f.split(':', 1)[0]}`:{f.split(':', 1)[1]}"
                                          if ":" in f else f"- {f}" for f in fails] + [""]
        notes = self.fallback_lines() + self.skip_lines()
        if notes:
            out += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
        return "\n".join(out)

    def write_markdown(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.markdown())


def _num(x):
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def _compact(d):
    out = {}
    for k, v in d.items():
        if v in (None, "", [], False) and k not in ("outcome",):
            continue
        if isinstance(v, float) and not math.isfinite(v):
            v = str(v)
        out[k] = v
    return out
