"""`python -m dispatchtorch.backends [--json]`: list every discovered backend."""
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
        if b["missing_prims"]:
            lines.append(f"    missing prims (run on the CPU): {', '.join(b['missing_prims'])}")
        if b["composite_kernels"]:
            lines.append(f"    own kernels for composites: {', '.join(b['composite_kernels'])}")
        if b["unknown_ops"]:
            lines.append(f"    unknown op names (ignored): {', '.join(b['unknown_ops'])}")
    return "\n".join(lines) if lines else "no backends installed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="dispatchtorch-backends",
                                     description="List dispatchtorch's backends and their devices.")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    entries = report()
    print(json.dumps(entries, indent=2) if args.json else _format(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
