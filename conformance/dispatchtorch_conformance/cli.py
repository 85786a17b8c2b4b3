"""The `dispatchtorch-conformance` command."""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

EPILOG = """examples:
  dispatchtorch-conformance --backend opencl
  dispatchtorch-conformance --backend opencl --ops matmul,softmax --dtypes float32 --report r.json
  dispatchtorch-conformance --backend opencl --isolate --timeout 60 --xfails opencl-xfails.txt
  dispatchtorch-conformance --backend opencl --case add/float32/bcast      (reproduce one sample)

  dispatchtorch-conformance --backend opencl --prims                        (the prims' own cases)
  dispatchtorch-conformance diff old.json new.json                          (compare two reports)

exit status: 0 conformant (everything passed, every prim ran on the device), 1 something
failed or a prim fell back to the CPU (unless --allow-fallback), 2 the backend or the
options are unusable, 3 the run crashed (the report so far is written, naming the cell)"""


def _csv(text):
    return [p.strip() for p in text.split(",") if p.strip()] if text else None


def parser():
    p = argparse.ArgumentParser(
        prog="dispatchtorch-conformance", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check a dispatchtorch backend against the CPU reference, op by op and "
                    "dtype by dtype, and check the backend contract (transfers, views, devices).")
    p.add_argument("--backend", default="cpu", help="device type of the backend under test "
                   "(default: cpu, the reference itself)")
    p.add_argument("--device", type=int, default=0, help="device index (default 0)")
    p.add_argument("--ops", type=_csv, help="comma-separated case names, exactly ('sum' is "
                   "sum, not mean); an op name without a case of that name selects the op's "
                   "cases; fnmatch patterns ('bitwise_*') match case and op names")
    p.add_argument("--prims", nargs="?", const="*", type=_csv, metavar="PRIMS",
                   help="only the prims' own cases (all of them, or the comma-separated prims "
                   "given); they always run first")
    p.add_argument("--exclude-ops", type=_csv, help="op or case names to leave out")
    p.add_argument("--dtypes", type=_csv, help="comma-separated dtypes; default: every dtype "
                   "the device claims")
    p.add_argument("--report", metavar="FILE.json", help="write the JSON report here")
    p.add_argument("--markdown", metavar="FILE.md", help="write a Markdown summary here")
    p.add_argument("--html", metavar="FILE.html", help="write a self-contained HTML report here")
    p.add_argument("--badge", metavar="FILE.svg", help="write a status badge (SVG) here")
    p.add_argument("--xfails", metavar="FILE", help="expected failures of this backend, one "
                   "result-id pattern per line ('erfinv/float16  # reason')")
    p.add_argument("--skips", metavar="FILE", help="cells or samples not to run at all, same "
                   "format (for a kernel that hangs or crashes)")
    p.add_argument("--strict-xfail", action="store_true",
                   help="an expected failure that passes fails the run")
    p.add_argument("--isolate", action="store_true", help="run the ops in worker subprocesses; a "
                   "crash or a hang is reported for its cell and the run goes on")
    p.add_argument("--timeout", type=float, default=60.0, help="with --isolate: seconds one "
                   "sample may take (default 60); after an op's first hang its other dtypes "
                   "are not run")
    p.add_argument("--jobs", "-j", type=int, default=1, help="with --isolate: workers at once")
    p.add_argument("--no-fallback", action="store_true", help="a prim the backend lacks is an "
                   "error instead of running on the CPU (DISPATCHTORCH_FALLBACK=error)")
    p.add_argument("--allow-fallback", action="store_true", help="a run in which prims fell "
                   "back to the CPU may still be conformant (exit 0)")
    p.add_argument("--no-contract", action="store_true", help="skip the backend contract checks")
    p.add_argument("--contract-only", action="store_true", help="only the contract checks")
    p.add_argument("--case", metavar="ID", help="reproduce one case id (case/dtype[/sample[/check]])"
                   " and print its inputs, both outputs and the verdicts")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--coverage", action="store_true", help="list ops without cases; exit 1 if any")
    p.add_argument("--ready-backends", action="store_true", help="print the installed backends "
                   "that have a usable device, one per line, and exit")
    p.add_argument("--max-failures", type=int, default=30, help="failures printed (default 30)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["diff"]:
        from .diff import main as diff_main
        return diff_main(argv[1:])
    args = parser().parse_args(argv)
    warnings.filterwarnings("ignore", message=r".*no kernel for this prim.*")
    if args.coverage:
        from .coverage import problems
        lines = problems()
        print("\n".join(lines) if lines else "every op in dispatchtorch's OPS has a conformance case")
        return 1 if lines else 0
    if args.ready_backends:
        from dispatchtorch.dispatch import list_backends
        for rt in list_backends():
            if rt.status == "ready":
                print(rt.name)
        return 0
    from . import cases as C
    from .runner import SetupError, Target, cell_dtypes, select, unmatched
    all_cases = C.all_cases()
    missing = unmatched(all_cases, args.ops)
    if missing:
        print(f"dispatchtorch-conformance: no case matches --ops {','.join(missing)} "
              f"(`--list` shows the cases)", file=sys.stderr)
        return 2
    if args.list:
        for c in select(all_cases, args.ops, args.exclude_ops, args.prims):
            ds = cell_dtypes(c, args.dtypes)
            if ds:
                print(f"{c.name:24} op {c.op:20} {','.join(ds)}")
        return 0
    if args.backend == "meta":
        print("dispatchtorch-conformance: the meta backend has no values (its tensors have "
              "shapes and dtypes but no data), so there is nothing to compare with the "
              "reference", file=sys.stderr)
        return 2
    if not args.isolate and not args.case and hasattr(os, "fork"):
        from .survive import run_supervised
        return run_supervised(lambda journal: _main(args, all_cases, journal), args)
    return _main(args, all_cases, None)


def _main(args, all_cases, journal):
    from .runner import SetupError, Target, select
    try:
        target = Target(args.backend, args.device, args.no_fallback)
    except SetupError as exc:
        print(f"dispatchtorch-conformance: {exc}", file=sys.stderr)
        return 2
    if args.case:
        from .reproduce import reproduce
        return reproduce(target, args.case)
    dtypes = args.dtypes
    if dtypes:
        from .dtypes import NP
        bad = [d for d in dtypes if d not in NP]
        if bad:
            print(f"dispatchtorch-conformance: unknown dtypes {bad}", file=sys.stderr)
            return 2
    cases = [] if args.contract_only else select(all_cases, args.ops, args.exclude_ops,
                                                 args.prims)
    if (args.ops or args.prims) and not cases and not args.contract_only:
        print("dispatchtorch-conformance: no case matches the filters", file=sys.stderr)
        return 2
    from .xfails import PatternList, apply
    try:
        xfails = PatternList.load(args.xfails) if args.xfails else None
        skips = PatternList.load(args.skips) if args.skips else None
    except (OSError, ValueError) as exc:
        print(f"dispatchtorch-conformance: {exc}", file=sys.stderr)
        return 2
    if journal is not None:
        journal.begin(target, args)
    results, seconds = _run(args, target, cases, dtypes, skips, journal)
    return finish(args, target.describe(), target.reference.as_dict(), results, seconds,
                  xfails, partial_reasons(args, target))


def partial_reasons(args, target=None):
    """The options that leave part of the suite out (the headline says so)."""
    out = [f"--{name.replace('_', '-')}" for name in ("ops", "exclude_ops", "prims", "skips")
           if getattr(args, name)]
    if args.dtypes and target is not None and not target.dtypes <= set(args.dtypes):
        out.append("--dtypes")
    out += [f"--{n.replace('_', '-')}" for n in ("contract_only", "no_contract") if getattr(args, n)]
    return out


def finish(args, backend, reference, results, seconds, xfails, partial, crashed=""):
    """Apply the expected failures, write every report asked for, print; the exit status."""
    from .report import Report
    from .xfails import apply
    unused = apply(results, xfails)
    report = Report(backend, reference, results, seconds,
                    options={k: v for k, v in vars(args).items()}, unused_xfails=unused,
                    strict_xfail=args.strict_xfail, allow_fallback=args.allow_fallback,
                    partial=partial, crashed=crashed)
    if args.report:
        report.write_json(args.report)
    if args.markdown:
        report.write_markdown(args.markdown)
    if args.html:
        from .html import write_html
        write_html(report, args.html)
    if args.badge:
        from .badge import write_badge
        write_badge(report, args.badge)
    if args.quiet:
        print(report.verdict())
        print(report.summary())
    else:
        print(report.terminal(args.max_failures))
    if crashed:
        return 3
    return 0 if report.conformant else 1


def _run(args, target, cases, dtypes, skips, journal=None):
    from . import contract
    from .runner import cell_dtypes, run
    contract_ids = [] if args.no_contract else [
        c for c in contract.names(target.dtypes)
        if not (skips and skips.match("contract/" + c))]
    cells = [(c, d) for c in cases for d in cell_dtypes(c, dtypes)]
    bar = _progress(len(cells) + (1 if contract_ids else 0), args)
    failed = [0]

    def seen(r):
        if r.failed:
            failed[0] += 1
            if bar is not None:
                bar.set_postfix_str(f"{failed[0]} failed", refresh=False)
    t0 = time.perf_counter()
    results = []
    if args.isolate:
        from .isolate import CONTRACT, run_isolated
        config = {"backend": args.backend, "device": args.device, "strict": args.no_fallback,
                  "skips": args.skips}
        jobs = [(c.name, c.op, cell_dtypes(c, dtypes)) for c in cases]
        if contract_ids:
            jobs.insert(0, (CONTRACT, "-", contract_ids))
        done = set()

        def tick(r):
            seen(r)
            key = (r.case, r.dtype) if not r.case.startswith("contract/") else ("contract", "")
            if bar is not None and key not in done:
                done.add(key)
                bar.update(1)
        results = run_isolated(config, jobs, args.timeout, args.jobs, tick)
    else:
        if contract_ids:
            if journal is not None:
                journal.start("contract")
            results += contract.run(target, only=lambda c: c in contract_ids)
            for r in results:
                seen(r)
            if journal is not None:
                journal.results(results)
            if bar is not None:
                bar.update(1)

        def cell_done(case, dtype, cell):
            for r in cell:
                seen(r)
            if journal is not None:
                journal.results(cell)
            if bar is not None:
                bar.set_description_str(case.name, refresh=False)
                bar.update(1)
        results += run(target, cases, dtypes, on_cell=cell_done, skips=skips,
                       on_start=journal.start_cell if journal is not None else None,
                       on_sample=journal.sample if journal is not None else None)
    if bar is not None:
        bar.close()
    return results, time.perf_counter() - t0


def _progress(total, args):
    if args.no_progress or args.quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm
    return tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True, leave=False)


if __name__ == "__main__":
    sys.exit(main())
