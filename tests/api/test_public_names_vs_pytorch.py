"""dispatchtorch's torch.optim, torch.optim.lr_scheduler, torch.optim.swa_utils,
torch.utils.data, torch.utils.checkpoint, torch.utils.tensorboard, torch.utils._pytree,
torch.utils.hooks, torch.amp and torch.accelerator against PyTorch's __all__: a name
PyTorch exports is present here, or listed as deliberately absent (with its reason) in
docs/dropin.md. A name listed there that exists here fails too (keep the page true)."""
from __future__ import annotations

import importlib
import pathlib
import re

import pytest

torch = pytest.importorskip("torch")

NAMESPACES = ["optim", "optim.lr_scheduler", "optim.swa_utils", "utils.data", "utils.checkpoint",
              "utils.tensorboard", "utils._pytree", "utils.hooks", "amp", "accelerator"]
NEEDS = {"utils.tensorboard": "tensorboard"}   # both sides import it: the [tensorboard] extra
DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "dropin.md"


def _documented_absent():
    """{namespace: {name}} from the page's "Deliberately absent" table rows
    `| torch.<ns> | `name`, `name` | reason |`."""
    out = {}
    text = DOC.read_text()
    section = text.split("## Deliberately absent", 1)[1]
    for line in section.splitlines():
        m = re.match(r"\|\s*`?torch\.([\w.]+)`?\s*\|(.*?)\|", line)
        if m:
            out.setdefault(m.group(1), set()).update(re.findall(r"`(\w+)`", m.group(2)))
    return out


def _counts(ns):
    if ns in NEEDS:
        pytest.importorskip(NEEDS[ns])
    theirs = list(importlib.import_module(f"torch.{ns}").__all__)
    ours = importlib.import_module(f"dispatchtorch.{ns}")
    present = [n for n in theirs if getattr(ours, n, None) is not None]
    return theirs, present


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_pytorch_name_is_present_or_documented_absent(ns):
    theirs, present = _counts(ns)
    absent = _documented_absent().get(ns, set())
    missing = [n for n in theirs if n not in present and n not in absent]
    assert not missing, f"torch.{ns} names missing here and not in docs/dropin.md: {missing}"
    stale = sorted(n for n in absent if n in present)
    assert not stale, f"docs/dropin.md lists as absent names that exist: torch.{ns}.{stale}"


def test_report_counts(capsys):
    lines = []
    for ns in NAMESPACES:
        theirs, present = _counts(ns)
        lines.append(f"torch.{ns}: {len(present)}/{len(theirs)} "
                     f"({100 * len(present) / len(theirs):.0f}%)")
    print("\n" + "\n".join(lines))
    optim = _counts("optim")
    assert len(optim[1]) / len(optim[0]) >= 0.95
