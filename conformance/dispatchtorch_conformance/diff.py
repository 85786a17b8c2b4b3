"""`dispatchtorch-conformance diff old.json new.json`: what changed between two reports,
for a vendor's CI: new failures (exit 1), fixes, slowdowns, prims that started or
stopped falling back, cells that appeared or disappeared."""
from __future__ import annotations

import argparse
import json
import sys

FAILING = {"FAIL", "err", "crash", "hang", "XPASS"}


def load(path):
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    if not str(rep.get("format", "")).startswith("dispatchtorch-conformance/"):
        raise ValueError(f"{path} is not a dispatchtorch-conformance JSON report")
    return rep


def _flat(rep):
    return {f"{case}/{d}": c for case, row in rep.get("cells", {}).items() for d, c in row.items()}


def diff(old, new, slowdown=1.5, min_seconds=0.05):
    """{'new_failures', 'fixed', 'slower', 'faster', 'added', 'removed',
    'new_fallbacks', 'no_longer_fall_back'}: lists of (cell id, detail)."""
    a, b = _flat(old), _flat(new)
    out = {k: [] for k in ("new_failures", "fixed", "slower", "faster", "added", "removed",
                           "new_fallbacks", "no_longer_fall_back")}
    for key in sorted(set(a) | set(b)):
        if key not in a:
            out["added"].append((key, b[key]["status"]))
            if b[key]["status"] in FAILING:
                out["new_failures"].append((key, f"new cell, {b[key]['status']}"))
            continue
        if key not in b:
            out["removed"].append((key, a[key]["status"]))
            continue
        sa, sb = a[key]["status"], b[key]["status"]
        if sb in FAILING and sa not in FAILING:
            why = f"{sa} -> {sb}"
            if b[key].get("blame"):
                why += f" (fails because {', '.join(b[key]['blame'])} fail)"
            out["new_failures"].append((key, why))
        elif sa in FAILING and sb not in FAILING:
            out["fixed"].append((key, f"{sa} -> {sb}"))
        ta, tb = a[key].get("seconds") or 0.0, b[key].get("seconds") or 0.0
        if tb >= min_seconds and tb > slowdown * max(ta, 1e-9):
            out["slower"].append((key, f"{ta:.3f}s -> {tb:.3f}s ({tb / max(ta, 1e-9):.1f}x)"))
        elif ta >= min_seconds and ta > slowdown * max(tb, 1e-9):
            out["faster"].append((key, f"{ta:.3f}s -> {tb:.3f}s"))
    fa = set(old.get("prims", {}).get("fell_back", []))
    fb = set(new.get("prims", {}).get("fell_back", []))
    out["new_fallbacks"] = [(p, "falls back to the CPU") for p in sorted(fb - fa)]
    out["no_longer_fall_back"] = [(p, "runs on the device") for p in sorted(fa - fb)]
    return out


TITLES = {"new_failures": "new failures", "fixed": "fixed", "slower": "slower",
          "faster": "faster", "new_fallbacks": "prims that now fall back",
          "no_longer_fall_back": "prims that now run on the device",
          "added": "cells added", "removed": "cells removed"}


def render(d, markdown=False):
    lines = []
    for key, title in TITLES.items():
        items = d[key]
        if not items:
            continue
        lines.append(f"## {title} ({len(items)})" if markdown else f"{title} ({len(items)}):")
        for k, why in items:
            lines.append(f"- `{k}`: {why}" if markdown else f"  {k}: {why}")
        lines.append("")
    head = (f"{len(d['new_failures'])} new failures, {len(d['fixed'])} fixed, "
            f"{len(d['slower'])} slower, {len(d['new_fallbacks'])} new fallbacks")
    return "\n".join(lines + [head])


def main(argv=None):
    p = argparse.ArgumentParser(prog="dispatchtorch-conformance diff",
                                description="Compare two JSON reports (old, new). Exit 1 when "
                                "the new one has failures or fallbacks the old one has not.")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--slowdown", type=float, default=1.5, help="report cells this many times "
                   "slower (default 1.5)")
    p.add_argument("--min-seconds", type=float, default=0.05, help="ignore cells faster than "
                   "this (default 0.05)")
    p.add_argument("--fail-on-slowdown", action="store_true", help="slowdowns also exit 1")
    p.add_argument("--markdown", metavar="FILE.md", help="also write the diff as Markdown")
    args = p.parse_args(argv)
    try:
        old, new = load(args.old), load(args.new)
    except (OSError, ValueError) as exc:
        print(f"dispatchtorch-conformance diff: {exc}", file=sys.stderr)
        return 2
    d = diff(old, new, args.slowdown, args.min_seconds)
    print(render(d))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("# dispatchtorch conformance: changes\n\n" + render(d, markdown=True) + "\n")
    bad = d["new_failures"] or d["new_fallbacks"] or (args.fail_on_slowdown and d["slower"])
    return 1 if bad else 0
