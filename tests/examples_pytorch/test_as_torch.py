"""`python -m dispatchtorch.as_torch program.py` runs a program that says `import torch`
on dispatchtorch: its torch modules are dispatchtorch's, and its numbers PyTorch's."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """
import sys
import torch
import torch.nn.functional as F
from torch.distributions import Categorical
torch.manual_seed(0)
x = torch.randn(3)
print(torch.__name__, F.__name__, Categorical.__module__, sys.argv[1:])
print(repr([round(v, 4) for v in x.tolist()]))
"""


def test_a_program_importing_torch_runs_on_dispatchtorch(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    out = subprocess.run([sys.executable, "-m", "dispatchtorch.as_torch", str(prog), "a", "b"],
                         capture_output=True, text=True, env=os.environ, timeout=120)
    assert out.returncode == 0, out.stderr
    names, numbers = out.stdout.splitlines()
    assert names == ("dispatchtorch dispatchtorch.nn.functional "
                     "dispatchtorch.distributions.categorical ['a', 'b']")
    assert numbers == "[1.541, -0.2934, -2.1788]"        # PyTorch's randn(3) after seed 0


def test_install_refuses_once_pytorch_is_imported():
    pytest.importorskip("torch")
    from dispatchtorch import as_torch
    with pytest.raises(RuntimeError, match="PyTorch is already imported"):
        as_torch.install()
