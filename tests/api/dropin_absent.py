"""docs/dropin.md's "Deliberately absent" table, read for the tests that hold every PyTorch
name present or listed there with its reason."""
from __future__ import annotations

import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "dropin.md"


def documented_absent():
    """{namespace: {name or shell-style pattern}} from the table's rows
    `| torch.<ns> | `name`, `pattern*` | reason |` (`| torch |`: the top level, "";
    `torch.Tensor` rows list Tensor attributes)."""
    out = {}
    section = DOC.read_text().split("## Deliberately absent", 1)[1]
    for line in section.splitlines():
        m = re.match(r"\|\s*`?torch(?:\.([\w.]+))?`?\s*\|(.*?)\|", line)
        if m:
            out.setdefault(m.group(1) or "", set()).update(
                re.findall(r"`([\w*?\[\]-]+)`", m.group(2)))
    return out
