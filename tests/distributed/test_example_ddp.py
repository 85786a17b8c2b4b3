"""examples/train_ddp.py on 2 ranks through the launcher, with DDP and with FSDP
(--fsdp): it learns, rank 0 saves a checkpoint that loads into the bare model (no
`module.` prefix)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import dispatchtorch.distributed as dist
from dispatchtorch.distributed import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(not dist.is_available() or run.find_mpiexec() is None,
                    reason=dist.unavailable_reason() or "mpiexec not found")
@pytest.mark.parametrize("wrapper", [[], ["--fsdp"]], ids=["ddp", "fsdp"])
def test_train_ddp_two_ranks_learns_and_saves(tmp_path, wrapper):
    pytest.importorskip("sklearn")
    ck = tmp_path / "ddp.safetensors"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "dispatchtorch.distributed.run",
                          "--nproc-per-node=2", os.path.join(ROOT, "examples", "train_ddp.py"),
                          "--epochs", "2", "--checkpoint", str(ck)] + wrapper,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert "training on 2 ranks" in out.stdout
    acc = float(out.stdout.split("test accuracy ")[1].split("%")[0]) / 100
    assert acc > 0.5                      # 10 classes: chance is 0.1
    import dispatchtorch as torch
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from train_digits import make_model
    m = make_model()
    m.load_state_dict(torch.load(str(ck)))
