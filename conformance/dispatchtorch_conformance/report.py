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
from .attribution import N_PRIMS, attribute, describe_blame, failing_prims, prim_coverage
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
    blame: set = field(default_factory=set)
    max_ulp: float | None = None
    max_abs: float | None = None
    seconds: float = 0.0
    ref_seconds: float = 0.0
    hung: bool = False

    def add(self, r):
        self.outcomes.add(r.outcome)
        self.fallback.update(r.fallback)
        self.decomposed = self.decomposed or r.decomposed
        if r.outcome == "skip" and not self.skip_reason:
            self.skip_reason = r.message
        if r.failed:
            self.blame.update(r.blame)
        # ulp only where the check was held to an ulp budget (a gradient's ulp distance
        # near zero says little); the absolute error of every check
        for key in ("max_ulp", "max_abs") if r.ulp_budget is not None else ("max_abs",):
            v = getattr(r, key)
            if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
                mine = getattr(self, key)
                setattr(self, key, v if mine is None else max(mine, v))
        self.seconds += r.seconds or 0.0
        self.ref_seconds += r.ref_seconds or 0.0

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
        if "not run (hung)" in self.skip_reason:
            return "hung"
        if "not run (crash)" in self.skip_reason:
            return "n/r"
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
        table.setdefault(r.case, {}).setdefault(r.dtype, Cell()).add(r)
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
    allow_fallback: bool = False
    partial: list = field(default_factory=list)     # what made the run partial (options)
    crashed: str = ""                               # the cell a crash ended the run in

    def __post_init__(self):
        attribute(self.results)
        self.prims = prim_coverage(self.results)

    @property
    def failed(self):
        bad = [r for r in self.results if r.failed]
        if self.strict_xfail:
            bad += [r for r in self.results if r.outcome == "xpass"]
        return bad

    @property
    def fell_back(self):
        return self.prims["fell_back"]

    @property
    def conformant(self):
        """Nothing failed, nothing crashed, and every prim ran on the device (unless
        fallbacks were allowed)."""
        return not self.failed and not self.crashed and \
            (self.allow_fallback or not self.fell_back)

    def prims_line(self):
        p = self.prims
        return f"prims on device {len(p['on_device'])}/{p['total']}, fell back {len(p['fell_back'])}"

    def verdict(self):
        if self.crashed:
            why = f"crashed in {self.crashed}"
        elif self.failed:
            why = f"{len(self.failed)} checks failed"
        elif self.fell_back and not self.allow_fallback:
            why = (f"{len(self.fell_back)} prims ran on the CPU instead of the device "
                   f"(--allow-fallback accepts that)")
        else:
            why = ""
        word = "NOT CONFORMANT" if why else "CONFORMANT"
        if self.fell_back and self.allow_fallback and not why:
            word += " (with CPU fallbacks)"
        if self.partial:
            word += f" (partial run: {', '.join(self.partial)})"
        return word + (f": {why}" if why else "")

    def summary(self):
        return f"{summary_line(self.results, self.seconds)}; {self.prims_line()}"

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
                        "failed": len(self.failed), "verdict": self.verdict(),
                        "conformant": self.conformant, "partial": self.partial,
                        "crashed": self.crashed,
                        "prims_on_device": len(self.prims["on_device"]),
                        "prims_fell_back": len(self.prims["fell_back"]),
                        "prims_total": N_PRIMS},
            "prims": {**self.prims, "missing": self.backend.get("missing_prims", []),
                      "failing": sorted(failing_prims(self.results))},
            "cells": {case: {d: _cell_json(c) for d, c in row.items()}
                      for case, row in table.items()},
            "unused_xfails": [{"pattern": e.pattern, "line": e.line, "reason": e.reason}
                              for e in self.unused_xfails],
            "results": [_compact(_slim(r.as_dict(), r.failed)) for r in self.results],
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
            if r.max_ulp is not None and r.ulp_budget is not None:
                err = f" [max {r.max_ulp:.4g} ulp, budget {r.ulp_budget:g}]"
            elif r.max_abs is not None and r.max_rel is None:
                err = f" [max abs difference {_num(r.max_abs)}]"
            elif r.max_abs is not None:
                err = f" [max abs {_num(r.max_abs)}, max rel {_num(r.max_rel)}]"
            label = {"fail": "FAIL", "error": "ERROR", "crash": "CRASH", "timeout": "TIMEOUT",
                     "xpass": "XPASS"}[r.outcome]
            lines.append(f"{label} {r.id}{err}: {r.message}{_blame_text(r)}")
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
        bad = sorted(failing_prims(self.results))
        if bad:
            lines.append(f"prims whose own cases fail (failures of other cells that ran them "
                         f"say so): {', '.join(bad)}")
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
        out += ["", self.verdict(), self.summary()]
        return "\n".join(out)

    # -- Markdown --------------------------------------------------------------------
    def markdown(self, max_failures=500):
        b = self.backend
        env = environment()
        out = [f"# dispatchtorch conformance: `{b['name']}`", "",
               f"**{self.verdict()}**", "", f"**{self.summary()}**", "",
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


def _blame_text(r):
    if r.blame:
        return f" — {describe_blame(r.blame)}"
    own = {f"{r.op}/{r.dtype}"}
    if r.failed and set(r.prims) - own:
        shown = ", ".join(r.prims[:8]) + (", ..." if len(r.prims) > 8 else "")
        return f" (prims run on the device: {shown})"
    return ""


def _cell_json(c):
    d = {"status": c.status, "fallback": sorted(c.fallback), "decomposed": c.decomposed}
    if c.blame:
        d["blame"] = sorted(c.blame)
    if c.max_ulp is not None:
        d["max_ulp"] = c.max_ulp
    if c.max_abs is not None and math.isfinite(c.max_abs):
        d["max_abs"] = c.max_abs
    d["seconds"] = round(c.seconds, 4)
    d["ref_seconds"] = round(c.ref_seconds, 4)
    return d


def _slim(d, failed):
    """Passing results keep their verdict and numbers; the prims they ran are in the
    `prims` section (failing results list theirs, for the attribution)."""
    if not failed:
        d.pop("prims", None)
    return d


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
