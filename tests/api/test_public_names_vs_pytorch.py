"""dispatchtorch's top-level torch namespace, torch.optim, torch.optim.lr_scheduler,
torch.optim.swa_utils, torch.utils.data, torch.utils.checkpoint, torch.utils.tensorboard,
torch.utils._pytree, torch.utils.hooks, torch.amp, torch.accelerator, torch.jit,
torch.compiler, torch.profiler, torch.autograd.profiler, torch.hub, torch.distributions (with
its constraints and transforms), torch.futures and torch.distributed.algorithms' join and
DDP comm hooks against PyTorch's __all__: a name PyTorch exports is
present here, or listed as deliberately absent (with its reason) in docs/dropin.md, by
name or by a shell-style pattern (`cudnn_*`). A name listed there that exists here fails
too, and so does a pattern matching one (keep the page true)."""
from __future__ import annotations

import fnmatch
import importlib

import pytest

from tests.api.dropin_absent import documented_absent as _documented_absent

torch = pytest.importorskip("torch")

NAMESPACES = ["", "optim", "optim.lr_scheduler", "optim.swa_utils", "utils.data",
              "utils.checkpoint", "utils.tensorboard", "utils._pytree", "utils.hooks", "amp",
              "accelerator", "jit", "compiler", "profiler", "autograd.profiler", "hub", "distributions",
              "distributions.constraints", "distributions.transforms", "futures",
              "distributed.algorithms.join", "distributed.algorithms.ddp_comm_hooks",
              "distributed.algorithms.ddp_comm_hooks.default_hooks",
              "distributed.algorithms.ddp_comm_hooks.powerSGD_hook"]
NEEDS = {"utils.tensorboard": "tensorboard"}   # both sides import it: the [tensorboard] extra


def _listed(name, entries):
    return any(fnmatch.fnmatchcase(name, e) for e in entries)


def _module(lib, ns):
    return importlib.import_module(f"{lib}.{ns}" if ns else lib)


def _counts(ns):
    if ns in NEEDS:
        pytest.importorskip(NEEDS[ns])
    module = _module("torch", ns)
    theirs = list(module.__all__)
    ours = _module("dispatchtorch", ns)
    # present: defined here, and not None unless PyTorch's is None too (torch.newaxis)
    present = [n for n in theirs if getattr(ours, n, None) is not None
               or (hasattr(ours, n) and getattr(module, n) is None)]
    return theirs, present


@pytest.mark.parametrize("ns", NAMESPACES, ids=[ns or "torch" for ns in NAMESPACES])
def test_every_pytorch_name_is_present_or_documented_absent(ns):
    theirs, present = _counts(ns)
    absent = _documented_absent().get(ns, set())
    missing = [n for n in theirs if n not in present and not _listed(n, absent)]
    where = f"torch.{ns}" if ns else "torch"
    assert not missing, f"{where} names missing here and not in docs/dropin.md: {missing}"
    stale = sorted(n for n in present if _listed(n, absent))
    assert not stale, f"docs/dropin.md lists as absent names that exist in {where}: {stale}"
    unused = sorted(e for e in absent if not any(fnmatch.fnmatchcase(n, e) for n in theirs))
    assert not unused, f"docs/dropin.md lists for {where} names PyTorch does not export: {unused}"


def test_report_counts(capsys):
    lines = []
    for ns in NAMESPACES:
        theirs, present = _counts(ns)
        lines.append(f"torch{'.' if ns else ''}{ns}: {len(present)}/{len(theirs)} "
                     f"({100 * len(present) / len(theirs):.0f}%)")
    print("\n" + "\n".join(lines))
    optim = _counts("optim")
    assert len(optim[1]) / len(optim[0]) >= 0.95
