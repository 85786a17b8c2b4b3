"""The command line the per-case profilers share: -k names one benchmark case."""
import argparse


def case_parser(prog, doc, calls, top):
    p = argparse.ArgumentParser(prog=f"python -m benchmarks.{prog}",
                                description=doc.splitlines()[0])
    p.add_argument("-k", required=True, help="a case name (python -m benchmarks --list)")
    p.add_argument("--calls", type=int, default=calls,
                   help=f"timed calls of the case (default {calls})")
    p.add_argument("--top", type=int, default=top, help="rows to print")
    return p


def parse_case(p, argv, device):
    """(args, case, Framework of dispatchtorch on device)."""
    from . import cases as C
    from .frameworks import Framework
    import dispatchtorch as dt

    args = p.parse_args(argv)
    case = next((c for c in C.CASES if c.name == args.k), None)
    if case is None:
        p.error(f"no case named {args.k!r}")
    return args, case, Framework("dispatchtorch", dt, device=device, label=f"ours:{device}")
