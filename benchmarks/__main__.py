"""`python -m benchmarks`: time every case on numpy, PyTorch and dispatchtorch's devices.

Prints a table of ratios (ours / numpy, ours / torch: time per call, lower is
better) and writes OUT/benchmarks.json and OUT/benchmarks.png.
"""
from __future__ import annotations

import argparse
import os
import sys

from . import cases as case_catalogue
from . import report
from .frameworks import (numpy_framework, ours_framework, select_devices, thread_pools,
                         torch_framework)
from .runner import Settings, run_case
from .threads import BlasControl, library_defaults, settings_for


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-k", dest="select", metavar="PATTERNS",
                   help="run cases whose name contains any of these comma-separated patterns "
                        "(e.g. -k tiny,matmul/1024)")
    p.add_argument("--device", metavar="DEVICES",
                   help="dispatchtorch devices, comma-separated: a type ('opencl': all its "
                        "devices) or one device ('opencl:1'); default: every ready device")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: small sizes, short batches, few repeats (ratios are rough)")
    p.add_argument("--out", default="bench-results", metavar="DIR",
                   help="where benchmarks.json and benchmarks.png go (default: bench-results)")
    p.add_argument("--repeats", type=int, help="timed batches per framework (default 7, quick 3)")
    p.add_argument("--min-batch", type=float, metavar="SECONDS",
                   help="each timed batch lasts at least this (default 0.1, quick 0.005)")
    p.add_argument("--threads", default="0,1", metavar="COUNTS",
                   help="thread settings, comma-separated, each case runs under every one: 0 "
                        "is each library's own default (numpy's BLAS, PyTorch's intra-op "
                        "threads, dispatchtorch's CPU pool), n is n threads for all "
                        "(default 0,1: both, in the same run)")
    p.add_argument("--no-chart", action="store_true", help="skip the PNG")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--from-json", metavar="FILE",
                   help="measure nothing: reprint the table of a saved run and redraw its "
                        "chart into --out")
    return p.parse_args(argv)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.from_json:
        return replay(args)
    chosen = case_catalogue.select(args.select)
    if args.list:
        for c in chosen:
            print(f"{c.name:26} {c.description}")
        return 0
    if not chosen:
        print(f"no case matches -k {args.select!r}", file=sys.stderr)
        return 2
    settings = Settings.quick_mode() if args.quick else Settings()
    if args.repeats:
        settings.repeats = args.repeats
        settings.min_repeats = min(settings.min_repeats, args.repeats)
    if args.min_batch is not None:
        settings.min_batch_s = args.min_batch

    blas = BlasControl()                  # before dispatchtorch's CPU backend pins BLAS
    defaults = library_defaults()
    devices, not_run = select_devices(args.device)
    frameworks = [numpy_framework()]
    torch_fw, torch_missing = torch_framework()
    if torch_fw is not None:
        frameworks.append(torch_fw)
    ours = [ours_framework(d) for d in devices]
    frameworks += ours
    ours_labels = [fw.label for fw in ours]
    try:
        thread_settings = settings_for(args.threads, frameworks, blas, defaults)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2

    meta = report.metadata(frameworks, settings, argv, not_run)
    meta["thread_pools"] = thread_pools()
    meta["thread_settings"] = {t.label: {fw.label: t.count(fw) for fw in frameworks}
                               for t in thread_settings}
    print(f"dispatchtorch benchmarks  {meta['time']}  commit {meta['git_commit'] or '?'}")
    print("  " + ", ".join(f"{fw.label} {fw.version}" for fw in frameworks))
    for t in thread_settings:
        print(f"  threads {t.label}: " + ", ".join(f"{fw.label} {t.count(fw)}"
                                                   for fw in frameworks))
    if meta["environment"]:
        print("  " + " ".join(f"{k}={v}" for k, v in meta["environment"].items()))
    if meta["thread_pools"]:
        print("  thread pools: " + ", ".join(f"{p['library']} {p['threads']}"
                                             for p in meta["thread_pools"]))
    if meta["load_average"]:
        cpus = meta["machine"]["cpu_count"] or 1
        print("  load average: " + " ".join(f"{x:.2f}" for x in meta["load_average"])
              + f" on {cpus} cpus")
        if meta["load_average"][0] > cpus:
            print("  the machine is busy: multi-threaded pools slow down when a thread is "
                  "descheduled; compare the '1 thread' rows too")
    if torch_missing:
        print(f"  torch: not run ({torch_missing})")
    for name, why in not_run.items():
        print(f"  {name}: not run ({why})")
    if not ours:
        print("no dispatchtorch device is ready", file=sys.stderr)
        return 2

    results = []
    for case in chosen:
        for t in thread_settings:
            for fw in frameworks:
                fw.activate = t.activation(fw)
            print(f"  {case.name} [{t.label}] ...", end="", flush=True)
            res = run_case(case, frameworks, settings, log=lambda s: print("\n" + s, end=""))
            res.threads = t.label
            print(f" {res.wall_s:.1f}s", flush=True)
            results.append(res)

    print()
    print(report.table(results, ours_labels))
    if args.markdown:
        print()
        print(report.markdown_table(results, ours_labels))
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "benchmarks.json")
    report.write_json(json_path, meta, results, ours_labels, torch_missing)
    print(f"\nwrote {json_path}")
    if not args.no_chart:
        chart(args.out, results, ours_labels, meta)
    failed = [e for r in results for e in r.entries.values() if e.status in ("error", "wrong")]
    return 1 if failed else 0


def replay(args) -> int:
    meta, results, ours_labels = report.load(args.from_json)
    print(f"{meta['command']}  ({meta['time']}, commit {meta['git_commit'] or '?'})\n")
    print(report.table(results, ours_labels))
    if args.markdown:
        print()
        print(report.markdown_table(results, ours_labels))
    if not args.no_chart:
        os.makedirs(args.out, exist_ok=True)
        chart(args.out, results, ours_labels, meta)
    return 0


def chart(out_dir, results, ours_labels, meta):
    png_path = os.path.join(out_dir, "benchmarks.png")
    try:
        report.write_chart(png_path, results, ours_labels,
                           title=f"dispatchtorch vs numpy and PyTorch ({meta['time']})")
    except ImportError as exc:
        print(f"no chart: matplotlib is not installed ({exc})")
        return
    print(f"wrote {png_path}")


if __name__ == "__main__":
    sys.exit(main())
