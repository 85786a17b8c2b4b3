"""The HTML report: one self-contained file (inline CSS, no scripts, no network) that a
vendor can publish. Failures first, then the op families as collapsible sections
(open where something failed) with coloured op x dtype cells, each with its worst ulp
or absolute error and the time on the device against the CPU reference."""
from __future__ import annotations

import html
import math

from . import __version__
from .attribution import describe_blame, failing_prims
from .dtypes import SHORT
from .report import LEGEND, cells, environment

COLOURS = {"ok": "#c8efc8", "FAIL": "#f7b5b5", "err": "#f7c9a0", "crash": "#e08080",
           "hang": "#e0a080", "hung": "#eeeeee", "n/r": "#eeeeee", "xfail": "#f4e7a8",
           "XPASS": "#a8d8f4", "skip": "#eeeeee", "n/c": "#f6f6f6", "-": "#ffffff"}

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}
.verdict{padding:.6em 1em;border-radius:6px;font-weight:bold;font-size:1.1em}
.good{background:#c8efc8}.bad{background:#f7b5b5}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;
font-size:.85em;text-align:left;vertical-align:top}th{background:#f0f0f0}
td.c{text-align:center;white-space:nowrap}small{color:#555}
details{margin:.3em 0}summary{cursor:pointer;font-weight:bold}
.fail-list li{margin:.25em 0;font-family:monospace;font-size:.85em}
code{background:#f4f4f4;padding:0 2px}
"""


def _e(x):
    return html.escape(str(x), quote=True)


def _err(c):
    if c.max_ulp is not None and c.max_ulp > 0 and math.isfinite(c.max_ulp):
        return f"{c.max_ulp:.3g} ulp"
    if c.max_abs is not None and c.max_abs > 0 and math.isfinite(c.max_abs):
        return f"abs {c.max_abs:.2g}"
    return ""


def _families(names):
    try:
        from .cases import families
        fam = families()
    except Exception:          # noqa: BLE001 (a report built elsewhere: one family)
        fam = {}
    out = {}
    for n in names:
        out.setdefault(fam.get(n, "other"), []).append(n)
    return out


def render(report) -> str:
    b = report.backend
    env = environment()
    table = cells(report.results)
    dts = report.dtypes()
    good = report.conformant
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>dispatchtorch conformance: {_e(b.get('name'))}</title>",
           f"<style>{CSS}</style></head><body>",
           f"<h1>dispatchtorch conformance: <code>{_e(b.get('name'))}</code></h1>",
           f"<p class=\"verdict {'good' if good else 'bad'}\">{_e(report.verdict())}</p>",
           f"<p><b>{_e(report.summary())}</b>"
           + (" &mdash; <b>partial run</b>" if report.partial else "") + "</p>"]
    # failures first
    bad = [r for r in report.results if r.failed or r.outcome == "xpass"]
    out.append(f"<h2 id=\"failures\">Failures ({len(bad)})</h2>")
    if bad:
        out.append("<ol class=\"fail-list\">")
        for r in bad[:1000]:
            why = f" &mdash; <b>{_e(describe_blame(r.blame))}</b>" if r.blame else ""
            num = ""
            if r.max_ulp is not None and r.ulp_budget is not None:
                num = f" [max {r.max_ulp:.4g} ulp, budget {r.ulp_budget:g}]"
            elif r.max_abs is not None:
                num = f" [max abs {r.max_abs:.3g}]"
            out.append(f"<li><b>{_e(r.outcome.upper())}</b> {_e(r.id)}{_e(num)}: "
                       f"{_e(r.message[:600])}{why}</li>")
        if len(bad) > 1000:
            out.append(f"<li>... and {len(bad) - 1000} more (see the JSON report)</li>")
        out.append("</ol>")
    else:
        out.append("<p>none</p>")
    failing = sorted(failing_prims(report.results))
    p = report.prims
    out += ["<h2>Prims</h2>", "<table><tr><th>on the device</th><th>fell back to the CPU</th>"
            "<th>own cases fail</th><th>without a kernel</th></tr>",
            f"<tr><td>{len(p['on_device'])}/{p['total']}: {_e(', '.join(p['on_device']))}</td>"
            f"<td>{len(p['fell_back'])}: {_e(', '.join(p['fell_back']))}</td>"
            f"<td>{_e(', '.join(failing))}</td>"
            f"<td>{_e(', '.join(b.get('missing_prims') or []))}</td></tr></table>"]
    # the op families
    out.append("<h2>Ops &times; dtypes</h2>")
    out.append(f"<p><small>{_e(LEGEND)}. Each cell: the worst distance from the reference "
               "(ulp, or absolute error where the op keeps a tolerance) and the seconds on "
               "the device / on the CPU reference.</small></p>")
    head = "<tr><th>case</th>" + "".join(f"<th>{_e(SHORT[d])}</th>" for d in dts) + "</tr>"
    groups = _families(list(table))
    order = sorted(groups, key=lambda f: (not any(
        table[c][d].status in ("FAIL", "err", "crash", "hang") for c in groups[f]
        for d in table[c]), f))
    for fam in order:
        names = groups[fam]
        nbad = sum(1 for c in names for d in table[c]
                   if table[c][d].status in ("FAIL", "err", "crash", "hang", "XPASS"))
        opened = " open" if nbad else ""
        out.append(f"<details{opened}><summary>{_e(fam)} ({len(names)} cases, {nbad} failing "
                   f"cells)</summary><table>{head}")
        for case in sorted(names, key=lambda c: not any(
                table[c][d].status in ("FAIL", "err", "crash", "hang") for d in table[c])):
            row = table[case]
            tds = []
            for d in dts:
                c = row.get(d)
                if c is None:
                    tds.append("<td class=\"c\">-</td>")
                    continue
                st = c.status
                tip = c.skip_reason or (describe_blame(sorted(c.blame)) if c.blame else st)
                extra = _err(c)
                time_ = f"{c.seconds:.2f}/{c.ref_seconds:.2f}s" if c.seconds or c.ref_seconds else ""
                tds.append(f"<td class=\"c\" style=\"background:{COLOURS.get(st, '#fff')}\" "
                           f"title=\"{_e(tip)}\">{_e(c.text())}<br><small>{_e(extra)}"
                           f"{'<br>' if extra and time_ else ''}{_e(time_)}</small></td>")
            out.append(f"<tr><td>{_e(case)}</td>{''.join(tds)}</tr>")
        out.append("</table></details>")
    contract = report.contract_lines()
    if contract:
        out += ["<h2>Backend contract</h2>", "<ul>"] + \
            [f"<li>{_e(c.strip())}</li>" for c in contract] + ["</ul>"]
    # environment
    rows = [("backend", f"{b.get('name')} {b.get('version', '')} ({b.get('distribution', '')})"),
            ("device under test", b.get("device_under_test"))]
    for d in b.get("devices", []):
        rows.append((f"device {d.get('index')}", f"{d.get('name')}: {', '.join(d.get('dtypes', []))}"))
    rows += [("reference", f"cpu {report.reference.get('version', '')}"),
             ("command line", " ".join(env["argv"])),
             ("partial run", ", ".join(report.partial) if report.partial else "no"),
             ("seconds", f"{report.seconds:.1f}")]
    rows += [(k, env[k]) for k in ("python", "platform", "numpy", "dispatchtorch", "time")
             if k in env]
    rows.append(("dispatchtorch-conformance", __version__))
    out += ["<h2>Environment</h2>", "<table>"] + \
        [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows] + ["</table>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_html(report, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(report))
