"""The guide's quick start, as a newcomer runs it: its install command in the checkout,
then its commands, in order, in an empty directory of a truly fresh virtual environment
(nothing inherited), give a working backend."""
import json
import re
import subprocess
from pathlib import Path

from fresh_env import make_venv

from template_gaps import NUMPY_LACKS

# the prims numpy has no function for (the template leaves them to the CPU fallback)


ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-a-backend.md"
# Here the conformance command runs these ops (one or more per family) and the contract
# checks, to stay quick; .ci/third_party_backend.sh runs every op against the remote
# example, whose kernels are the template's.
QUICK_OPS = "add,mul,div,exp,where,sigmoid,sum,amax,argmax,matmul,gather,scatter_add,cat,slice"


def _block_after(marker: str) -> list[str]:
    text = GUIDE.read_text()
    block = re.search(r"```sh\n(.*?)```", text[text.index(marker):], re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def guide_commands() -> list[str]:
    """The shell block that follows the newcomer-path marker."""
    return _block_after("<!-- newcomer-path")


def setup_commands() -> list[str]:
    """The guide's install commands, run in a checkout of this repository."""
    return _block_after("<!-- newcomer-setup")


def test_the_guide_names_the_steps_a_newcomer_needs():
    commands = guide_commands()
    assert commands[0].startswith("dispatchtorch-backends new ")
    assert any(c.startswith("pip install -e ") for c in commands)
    assert any(c.startswith("dispatchtorch-conformance --backend ") for c in commands)


def run(command, cwd, env):
    result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, f"{command}\n{result.stdout[-5000:]}\n{result.stderr[-5000:]}"
    return result.stdout


def opencl_commands() -> list[str]:
    """docs/backends/opencl.md's install (the PoCL form) and listing commands."""
    text = (ROOT / "docs" / "backends" / "opencl.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    return [c for c in lines if "[pocl]" in c or c.startswith("python ")]


def test_newcomer_path(tmp_path):
    env = make_venv(tmp_path / "venv")
    for command in setup_commands():
        run(command, ROOT, env)
    work = tmp_path / "work"
    work.mkdir()
    outputs = {}
    for command in guide_commands():
        if command.startswith("dispatchtorch-conformance "):
            command += f" --ops {QUICK_OPS} --no-progress"        # a quick subset here
        outputs[command] = run(command, work, env)
    listing = next(out for cmd, out in outputs.items() if cmd == "dispatchtorch-backends")
    assert re.search(r"^acme  \(dispatchtorch-acme 0\.1\.0, backend API \d+\.\d+\): READY$",
                     listing, re.M), listing
    assert f"missing prims (run on the CPU): {', '.join(NUMPY_LACKS)}" in listing
    computed = next(out for cmd, out in outputs.items() if cmd.startswith("python -c"))
    assert computed.strip() == "30.0"
    # installed into the fresh venv, not the environment running the tests
    site = subprocess.run(["python", "-c", "import dispatchtorch_acme; print(dispatchtorch_acme.__file__)"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert site.returncode == 0 and Path(site.stdout.strip()).is_relative_to(work)
    report = json.loads((work / "acme-report.json").read_text())
    outcomes = {r["outcome"] for r in report["results"]}
    assert "pass" in outcomes and not outcomes & {"fail", "error", "crash", "timeout"}
    assert {r["op"] for r in report["results"]} >= {"add", "matmul", "sum"}
    tests = next(out for cmd, out in outputs.items() if "pytest" in cmd)
    assert "1 passed" in tests, tests
    # the OpenCL backend's page, in the same fresh venv: PoCL from the package index
    listing = [run(command, ROOT, env) for command in opencl_commands()][-1]
    assert re.search(r"^opencl  \(dispatchtorch-opencl .*\): READY$", listing, re.M), listing
