"""Presenting results: the ratio table, the JSON file and the PNG chart."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time


def fmt_time(seconds) -> str:
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(r) -> str:
    return "-" if r is None else f"{r:.2f}x"


def _cell(result, label):
    """A framework's median time, or why there is none."""
    e = result.entries.get(label)
    if e is None:
        return "n/a"
    if e.status != "ok":
        return e.status
    return fmt_time(e.timing.median)


def _spread(result, label):
    e = result.entries.get(label)
    if e is None or e.status != "ok":
        return ""
    lo, hi = e.timing.spread
    return f"±{50 * (hi - lo) / e.timing.median:.0f}%"


def _target_cell(case_dict, ours):
    t = case_dict["ratios"].get(ours, {}).get("target")
    if t is None:
        return ""
    met = {True: "met", False: "MISSED", None: "n/a"}[t["met"]]
    return f"<= {t['max_ratio']:.2f} vs {t['ref']}: {met}"


def table(results, ours_labels) -> str:
    """One row per (case, our device): times, the two ratios, the issue's target."""
    head = ["case", "threads", "device", "ours", "spread", "numpy", "torch", "ours/numpy",
            "ours/torch", "target"]
    rows = []
    notes = []
    for res in results:
        d = res.as_dict(ours_labels)
        for ours in ours_labels:
            r = d["ratios"][ours]
            rows.append([res.case.name, res.threads, ours.split(":", 1)[1], _cell(res, ours),
                         _spread(res, ours),
                         _cell(res, "numpy"), _cell(res, "torch"), fmt_ratio(r["numpy"]),
                         fmt_ratio(r["torch"]), _target_cell(d, ours)])
        for label, e in res.entries.items():
            if e.status != "ok":
                notes.append(f"{res.case.name} [{res.threads}, {label}] {e.status}: {e.reason}")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    if notes:
        out += ["", "not timed:"] + [f"  {n}" for n in notes]
    return "\n".join(out)


def markdown_table(results, ours_labels) -> str:
    """The same table in Markdown (for docs/performance.md)."""
    lines = ["| case | threads | device | ours | spread | numpy | torch | torch spread | "
             "ours/numpy | ours/torch | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        d = res.as_dict(ours_labels)
        for ours in ours_labels:
            r = d["ratios"][ours]
            lines.append("| " + " | ".join([
                f"`{res.case.name}`", res.threads, ours.split(":", 1)[1], _cell(res, ours),
                _spread(res, ours), _cell(res, "numpy"), _cell(res, "torch"),
                _spread(res, "torch"), fmt_ratio(r["numpy"]), fmt_ratio(r["torch"]),
                _target_cell(d, ours)]) + " |")
    return "\n".join(lines)


def _git_commit():
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


_ENV_SHOWN = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "DISPATCHTORCH_BACKENDS", "DISPATCHTORCH_FALLBACK")


def _loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def metadata(frameworks, settings, argv, skipped_devices) -> dict:
    return {
        "command": "python -m benchmarks " + " ".join(argv),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "cpu_count": os.cpu_count(), "python": sys.version.split()[0]},
        "git_commit": _git_commit(),
        "load_average": _loadavg(),
        "frameworks": {fw.label: {"kind": fw.kind, "version": fw.version, "device": fw.device,
                                  "threads": fw.threads} for fw in frameworks},
        "environment": {k: os.environ.get(k) for k in _ENV_SHOWN if k in os.environ},
        "devices_not_run": skipped_devices,
        "settings": {k: getattr(settings, k) for k in settings.__dataclass_fields__},
    }


def write_json(path, meta, results, ours_labels, torch_missing=""):
    doc = {"meta": {**meta, "torch_missing": torch_missing, "load_average_after": _loadavg()},
           "cases": [r.as_dict(ours_labels) for r in results]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
    return doc


def load(path):
    """(meta, results, ours_labels) from a JSON file this module wrote, to reprint the
    table or redraw the chart without measuring again."""
    from .cases import BY_NAME
    from .runner import Entry, Result
    from .timer import Timing
    with open(path) as f:
        doc = json.load(f)
    results = []
    for c in doc["cases"]:
        r = Result(BY_NAME[c["name"]], c["size"], threads=c.get("threads", "default"))
        for label, e in c["entries"].items():
            entry = r.entries[label] = Entry(label, e["framework"], e["status"], e["reason"])
            if "timing" in e:
                entry.timing = Timing(e["timing"]["number"], list(e["timing"]["samples_s"]))
        results.append(r)
    labels = list(doc["cases"][0]["ratios"]) if doc["cases"] else []
    return doc["meta"], results, labels


def write_chart(path, results, ours_labels, title=""):
    """Horizontal bars of ours/numpy and ours/torch per case, one panel per device,
    on a log axis with parity at 1 and the issues' targets marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f"{r.case.name} [{r.threads}]" for r in results]
    panels = max(1, len(ours_labels))
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 0.45 * len(names) + 1.8),
                             squeeze=False, sharey=True)
    for ax, ours in zip(axes[0], ours_labels or [""]):
        ys = range(len(names))
        for offset, ref, color in ((-0.2, "numpy", "tab:blue"), (0.2, "torch", "tab:orange")):
            bars = [(y + offset, r.ratio(ours, ref)) for y, r in zip(ys, results)]
            bars = [(y, v) for y, v in bars if v is not None]
            ax.barh([y for y, _ in bars], [v for _, v in bars], height=0.38, color=color,
                    label=f"ours / {ref}")
            for y, v in bars:
                ax.text(v, y, f" {v:.2f}", va="center", fontsize=7)
        for y, r in enumerate(results):
            e = r.entries.get(ours)
            if e is not None and e.status != "ok":
                why = e.reason if len(e.reason) <= 48 else e.reason[:47] + "…"
                ax.text(1.0, y, f" {e.status}: {why}", va="center", fontsize=7, color="dimgray")
            t = r.case.targets.get(ours.split(":")[1] if ":" in ours else "")
            if t is not None:
                off = -0.2 if t.ref == "numpy" else 0.2
                ax.plot([t.max_ratio] * 2, [y + off - 0.2, y + off + 0.2], color="red", lw=2)
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.set_yticks(list(ys), names)
        ax.set_xlabel("time ratio (lower is better; red: target)")
        ax.set_title(ours)
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0][0].invert_yaxis()          # first case on top (the y axis is shared: once)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
