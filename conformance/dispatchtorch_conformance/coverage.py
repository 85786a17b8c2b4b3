"""Which ops of the reference set have conformance cases, and which do not.

Every op in `dispatchtorch.dispatch.OPS` needs at least one case (a `Case` whose
`op` names it), unless it is listed in EXCLUDED with the reason it cannot or need
not be checked on its own.
"""
from __future__ import annotations

import importlib
import importlib.util

# op name -> why it has no case of its own. Only ops no user can call, whose
# behaviour the cases of a public op already check, belong here.
EXCLUDED: dict = {
    # in-place updates of lists of tensors (one optimizer step); the case format takes
    # tensors, not lists. Checked against PyTorch's Adam/AdamW/SGD steps, on the CPU kernel
    # and on the decomposition every other backend runs, in tests/nn/test_fused_optim.py
    "_fused_adam_": "a multi-tensor optimizer step (lists of tensors): tests/nn/test_fused_optim.py",
    "_fused_sgd_": "a multi-tensor optimizer step (lists of tensors): tests/nn/test_fused_optim.py",
}

# modules that declare ops beyond `import dispatchtorch` (imported when present)
OP_MODULES = ("dispatchtorch", "dispatchtorch.nn", "dispatchtorch.nn.functional")


def load_ops():
    """The op registry with every op-declaring module imported."""
    for name in OP_MODULES:
        if importlib.util.find_spec(name.split(".")[0]) is None:
            continue
        try:
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    from dispatchtorch.dispatch import OPS
    return OPS


def report(cases=None):
    """{"missing": ops without cases, "unknown": case ops not in OPS, "stale": excluded
    ops that are gone or have cases after all}."""
    ops = load_ops()
    if cases is None:
        from .cases import all_cases
        cases = all_cases()
    covered = {c.op for c in cases}
    return {
        "missing": sorted(n for n in ops if n not in covered and n not in EXCLUDED),
        "unknown": sorted({f"{c.name} (op {c.op!r})" for c in cases if c.op not in ops}),
        "stale": sorted(n for n in EXCLUDED if n not in ops or n in covered),
    }


def problems(cases=None):
    """Lines describing every coverage problem (empty when complete)."""
    r = report(cases)
    lines = [f"op '{n}' has no conformance case: add one to "
             f"dispatchtorch_conformance/cases/<family>.py (or list it in coverage.EXCLUDED "
             f"with a reason)" for n in r["missing"]]
    lines += [f"case {n} names an op that dispatchtorch does not register" for n in r["unknown"]]
    lines += [f"coverage.EXCLUDED lists '{n}', which is gone from OPS or has a case now"
              for n in r["stale"]]
    return lines
