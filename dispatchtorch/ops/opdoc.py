"""Render docs/ops.md from the op table: `python -m dispatchtorch.ops.opdoc` rewrites
it; tests/ops/test_coverage.py fails when it is out of date."""
from __future__ import annotations

import os
import sys

from ..backend.prims import PRIMS
from ..dispatch import OPS
from ..dispatch.registry import FRONTEND_KINDS

DOC_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "ops.md")

_KINDS = [("elementwise", "Elementwise"), ("reduction", "Reductions, statistics and norms"),
          ("scan", "Scans"), ("linalg", "Linear algebra"), ("indexing", "Indexing"),
          ("sort", "Sorting, selection and counting"), ("view", "Views"),
          ("memory", "Copies, casts and joins"), ("factory", "Factories")]
_DTYPES = {"all": "all", "numeric": "numeric (no bool)",
           "float": "floating only", "floating": "floating only", "integral": "bool and integers", "integer": "integers",
           "int_float": "numeric (no bool)"}


def _dtype_rule(op):
    if op.promote == "int_to_float":
        return "all; integers and bool compute in the default float dtype"
    return _DTYPES.get(op.dtypes, op.dtypes)


def _how(op):
    if op.prim:
        return "prim"
    if op.decomp is not None:
        return "composite" + (" (own derivative)" if op.grad is not None else "")
    return "frontend" if op.kind in FRONTEND_KINDS else "?"


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def render():
    """The whole page, deterministic (sorted) so that the test can compare it."""
    names = sorted(OPS)
    n_prims = sum(1 for n in names if OPS[n].prim)
    lines = [
        "# The reference op set",
        "",
        "Generated from the op table (`dispatchtorch.dispatch.OPS`) by "
        "`python -m dispatchtorch.ops.opdoc`; do not edit by hand.",
        "",
        f"**{len(names)} ops: {n_prims} prims, {len(names) - n_prims} composite or frontend.** "
        f"The prim catalogue (`dispatchtorch/backend/prims.py`) has {len(PRIMS)} prims; a backend "
        "that implements them (plus the memory methods) runs every op below.",
        "",
        "- *prim*: every backend implements it (calling convention in `backend/prims.py`).",
        "- *composite*: a decomposition into other ops, run on the backend of the inputs; "
        "*own derivative* means backward records one node with the op's own rule instead "
        "of differentiating the decomposition.",
        "- *frontend*: views, copies and factories, carried out with the backend's memory "
        "methods (as_strided, copy_, fill_, from_host).",
        "- A backend may register its own kernel for an *elementwise* composite (same calling "
        "convention as an elementwise prim); the other composites always run their "
        "decomposition (no kernel convention is defined for them yet).",
        "- *differentiable*: gradients flow to floating inputs (integer and bool outputs never "
        "require grad).",
        "- Public names (function, `Tensor` method, operator, in-place `_` form) follow "
        "PyTorch; several names share a row (e.g. `transpose`, `t`, `mT` are `permute`).",
        "",
    ]
    by_kind = {}
    for n in names:
        by_kind.setdefault(OPS[n].kind, []).append(n)
    known = [k for k, _ in _KINDS]
    for kind, title in _KINDS + [(k, k) for k in sorted(by_kind) if k not in known]:
        rows = by_kind.get(kind)
        if not rows:
            continue
        lines += [f"## {title}", "",
                  "| op | how | differentiable | dtypes | signature | semantics |",
                  "|---|---|---|---|---|---|"]
        for n in rows:
            op = OPS[n]
            lines.append(f"| `{n}` | {_how(op)} | {'yes' if op.differentiable else 'no'} | "
                         f"{_dtype_rule(op)} | `{_cell(op.signature or n)}` | "
                         f"{_cell(op.doc)} |")
        lines.append("")
    return "\n".join(lines)


def main():
    with open(DOC_PATH, "w", encoding="utf-8") as f:
        f.write(render())
    print(f"wrote {os.path.normpath(DOC_PATH)} ({len(OPS)} ops)", file=sys.stderr)


if __name__ == "__main__":
    main()
