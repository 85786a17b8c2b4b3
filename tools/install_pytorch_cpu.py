"""Install PyTorch's CPU build for the comparison tests and benchmarks, or say why not.

dispatchtorch never imports torch; its tests compare against it where it is installed.
On Linux the package index's `torch==2.13.0` is the CUDA build (torch plus ~17
nvidia/triton wheels, several GB) unless a CPU build is on offer (a local wheel folder
in pip's configuration, or TORCH_INDEX_URL naming PyTorch's CPU wheel index). So we ask
pip first (`--dry-run --report`) and install only a CPU build; otherwise the comparison
tests skip with their reason and this prints how to get one. `--require` (benchmarks)
turns "no CPU build" into a failure.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

VERSION = "torch==2.13.0"
CUDA_ONLY = ("nvidia-", "triton")


def pip(*args):
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]


def index_args():
    url = os.environ.get("TORCH_INDEX_URL")
    return ["--extra-index-url", url] if url else []


def planned_install():
    """What `pip install torch==2.13.0` would install here: [(name, version)]."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        subprocess.run(pip("install", "--dry-run", "--report", report, VERSION, *index_args()),
                       check=True, stderr=subprocess.DEVNULL)
        with open(report) as f:
            items = json.load(f)["install"]
    return [(i["metadata"]["name"].lower(), i["metadata"]["version"]) for i in items]


def main(argv):
    require = "--require" in argv
    try:
        import torch  # noqa: F401
        print(f"PyTorch {torch.__version__} is installed: comparison tests run against it")
        return 0
    except ImportError:
        pass
    plan = planned_install()
    torch_version = dict(plan).get("torch", "?")
    gpu_wheels = [n for n, _ in plan if n.startswith(CUDA_ONLY)]
    if "+cpu" in torch_version or not gpu_wheels:
        subprocess.run(pip("install", VERSION, *index_args()), check=True)
        print(f"installed PyTorch {torch_version} (CPU build) for the comparison tests")
        return 0
    print(f"PyTorch comparisons SKIPPED: the package index offers {VERSION} only as a CUDA "
          f"build ({len(gpu_wheels)} nvidia/triton wheels, several GB). Set TORCH_INDEX_URL "
          f"to PyTorch's CPU wheel index to run them.", file=sys.stderr)
    return 1 if require else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
