"""`dispatchtorch-backends`: list every discovered backend (the default), or
`dispatchtorch-backends new NAME [--dir PATH]`: start a new backend package."""
from __future__ import annotations

import argparse
import json
import sys

from . import report


def _format(entries) -> str:
    lines = []
    for b in entries:
        dist = f"{b['distribution'] or '?'} {b['version'] or ''}".rstrip()
        api = f", backend API {b['api_version']}" if b["api_version"] else ""
        lines.append(f"{b['name']}  ({dist}{api}): {b['status'].upper()}")
        if b["error"]:
            lines.append(f"    reason: {b['error']}")
        for d in b["devices"]:
            props = ", ".join(f"{k}={v}" for k, v in d["properties"].items())
            lines.append(f"    {b['name']}:{d['index']}  {d['name']}")
            lines.append(f"        dtypes: {', '.join(d['dtypes'])}")
            if props:
                lines.append(f"        {props}")
        if b["missing_prims"] and b["status"] == "ready":
            lines.append(f"    missing prims (run on the CPU): {', '.join(b['missing_prims'])}")
        if b["composite_kernels"]:
            lines.append(f"    own kernels for composites: {', '.join(b['composite_kernels'])}")
        if b["unknown_ops"]:
            lines.append(f"    unknown op names (ignored): {', '.join(b['unknown_ops'])}")
    return "\n".join(lines) if lines else "no backends installed"


def _list(args) -> int:
    entries = report()
    print(json.dumps(entries, indent=2) if args.json else _format(entries))
    return 0


def _new(args) -> int:
    from .new import TemplateError, create, placeholders
    try:
        target = create(args.name, args.dir)
    except TemplateError as exc:
        print(f"dispatchtorch-backends new: {exc}", file=sys.stderr)
        return 2
    names = placeholders(args.name)
    print(f"created {target}: the '{args.name}' device, kernels delegating to numpy\n"
          f"next:\n"
          f"  pip install -e {target}\n"
          f"  dispatchtorch-backends                      # '{args.name}' is listed READY\n"
          f"  dispatchtorch-conformance --backend {args.name}\n"
          f"  python -m pytest {target / 'tests'}\n"
          f"then replace the numpy calls in {target / names['__PACKAGE__'] / 'kernels.py'} and "
          f"{names['__PACKAGE__']}/backend.py with your device's (docs/writing-a-backend.md)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="dispatchtorch-backends",
        description="List dispatchtorch's backends and their devices (the default), or start "
                    "a new backend package.")
    parser.add_argument("--json", action="store_true", help="print the listing as JSON")
    parser.set_defaults(run=_list)
    commands = parser.add_subparsers(title="commands", metavar="{list,new}")
    listing = commands.add_parser("list", help="list the backends (the default)")
    listing.add_argument("--json", action="store_true", help="print the listing as JSON")
    listing.set_defaults(run=_list)
    new = commands.add_parser(
        "new", help="create a backend package: pyproject with the entry point, a Backend "
                    "delegating to numpy, a conformance test")
    new.add_argument("name", help="the device type, a lowercase identifier (e.g. 'acme')")
    new.add_argument("--dir", default=".", metavar="PATH",
                     help="where to create dispatchtorch-NAME/ (default: the current directory)")
    new.set_defaults(run=_new)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
