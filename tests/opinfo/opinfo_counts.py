"""Print the three OpInfo counts per dtype: ops present, forward matches, gradient matches.

    python tests/opinfo/opinfo_counts.py [--dtypes float32,float64,complex64] [--limit N]
                                         [--failures] [--ops name,name] [--no-errors]

Ops are counted by OpInfo name (entries sharing a name are one op), over the entries
PyTorch's CPU build supports for that dtype, less the skip list (opinfo_harness.SKIP);
then OpInfo's error inputs (the exception class must be PyTorch's).
Needs torch and expecttest (the dev extra).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

from opinfo_harness import SKIP, dt_dtype, op_names, present, run_errors, run_op


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtypes", default="float32,float64,complex64")
    p.add_argument("--limit", type=int, default=None, help="samples per OpInfo entry")
    p.add_argument("--ops", default=None, help="only these OpInfo names")
    p.add_argument("--failures", action="store_true", help="list every mismatch")
    p.add_argument("--absent", action="store_true", help="list the ops that are absent")
    p.add_argument("--no-errors", action="store_true", help="skip OpInfo's error inputs")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch
    db = [i for i in op_names() if i.name not in SKIP]
    if a.ops:
        want = set(a.ops.split(","))
        db = [i for i in db if i.name in want]
    for dtype in a.dtypes.split(","):
        t0 = time.time()
        td = getattr(torch, dtype)
        entries = [i for i in db if td in i.supported_dtypes("cpu")]
        names = {i.name for i in entries}
        have = {i.name for i in entries if present(i)}
        f = fm = g = gm = 0
        failures = []
        if dt_dtype(dtype) is None:
            have = set()
        for info in entries:
            if info.name not in have:
                continue
            r = run_op(info, dtype, a.limit)
            f, fm, g, gm = f + r.forward, fm + r.fmatch, g + r.gradient, gm + r.gmatch
            failures += [f"{info.name}{'.' + info.variant_test_name if info.variant_test_name else ''}"
                         f": {m}" for m in r.failures]
        print(f"{dtype}: ops present {len(have)}/{len(names)}; forward matches {fm}/{f}; "
              f"gradient matches {gm}/{g}  ({time.time() - t0:.0f} s)")
        if dt_dtype(dtype) is None:
            print(f"  dispatchtorch has no {dtype} dtype")
        if a.failures:
            for m in failures:
                print("   ", m)
        if a.absent:
            print("  absent:", " ".join(sorted(names - have)))
    if not a.no_errors:
        _errors(db, a.failures)
    return 0


def _errors(db, list_failures):
    """OpInfo's error inputs (dtype-independent): the exception class must match."""
    t0 = time.time()
    n = tm = mm = 0
    failures = []
    for info in db:
        if not present(info):
            continue
        r = run_errors(info)
        n, tm, mm = n + r.compared, tm + r.type_match, mm + r.message_match
        failures += [f"{info.name}{'.' + info.variant_test_name if info.variant_test_name else ''}"
                     f": {m}" for m in r.failures]
    print(f"error inputs: exception class matches {tm}/{n}; PyTorch's message regex also "
          f"matches {mm}/{n}  ({time.time() - t0:.0f} s)")
    if list_failures:
        for m in failures:
            print("   ", m)


if __name__ == "__main__":
    sys.exit(main())
