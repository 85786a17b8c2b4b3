"""keep_memory.py: once the CPU backend is up, memory a step frees is reused by the next
without page faults (glibc), and DISPATCHTORCH_CPU_KEEP_MEMORY=0 leaves glibc alone."""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch_cpu import keep_memory

pytestmark = pytest.mark.skipif(not keep_memory.keep_freed_memory(), reason="not glibc")

_CHILD = """
import resource, numpy as np
import dispatchtorch as dt
dt.ones(1) + 1                      # the CPU backend is up
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(2):                  # a step: 24 MB of 2 MB activations kept, then freed
    acts = [np.ones(1 << 19, np.float32) for _ in range(12)]
    del acts
f0 = faults()
acts = [np.ones(1 << 19, np.float32) for _ in range(12)]
print(faults() - f0)
"""


def _second_step_faults(env):
    out = subprocess.run([sys.executable, "-c", _CHILD], env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def test_a_freed_step_is_reused_without_page_faults():
    kept = _second_step_faults({})
    default = _second_step_faults({"DISPATCHTORCH_CPU_KEEP_MEMORY": "0"})
    assert kept < 200                  # 12 x 512 pages would fault if handed back
    assert default > 3000              # glibc's defaults trim the heap (the setting matters)


def test_the_backend_applies_it_in_process():
    dt.ones(2) + 1
    assert keep_memory.applied
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        acts = [np.ones(1 << 19, np.float32) for _ in range(6)]
        del acts
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0 < 6 * 512
