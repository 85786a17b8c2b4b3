"""c_sum.py's full sum: bit for bit the blocked sum its docstring describes (a numpy
model of the blocks, lanes and tree), the path a large float sum really takes, on
OpenMP threads, and libgomp's spin setting taken back out of the environment."""
import os
import subprocess
import sys

import numpy as np
import pytest

from dispatchtorch_cpu import c_sum
from dispatchtorch_cpu import parallel as P
from dispatchtorch_cpu import threaded as T
from test_threaded_kernels import _full_sum       # the sum kernel at a thread count

pytestmark = pytest.mark.skipif(not c_sum.available(np.dtype(np.float32)),
                                reason="no C compiler: the full sum runs as row sums")
rng = np.random.default_rng(11)


def _model(x):
    """The blocked sum in numpy, one float op at a time in the C loop's order: each
    lane adds ROWS terms in sequence, those sums join the lane's total in sequence,
    the lanes' totals fold as a binary tree: the blocks' partials (numpy's pairwise
    loop adds them)."""
    _, block, lanes = c_sum._SHAPES[x.dtype]
    sub = lanes * c_sum.ROWS
    partials = []
    for start in range(0, x.size, block):
        p = x[start:start + block]
        total = np.zeros(lanes, x.dtype)
        for s in range(0, p.size, sub):
            q = p[s:s + sub]
            acc = np.zeros(lanes, x.dtype)
            whole = q.size - q.size % lanes
            for j in range(0, whole, lanes):
                acc += q[j:j + lanes]
            acc[:q.size - whole] += q[whole:]
            total += acc
        half = lanes // 2
        while half:
            total[:half] += total[half:2 * half]
            half //= 2
        partials.append(total[0])
    return np.array(partials, x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blocks_are_the_documented_sum_bit_for_bit(dtype, threads, monkeypatch):
    """A ragged last block and lane row: the C kernel's bits are the
    model's, whatever the thread count; the row sums (no compiler) are never called."""
    def rows(*args):
        raise AssertionError("the row sums ran where the C blocks should")
    monkeypatch.setattr(T, "_full_sum_by_rows", rows)
    x = (rng.standard_normal(P.THRESHOLD + 3 * c_sum.BLOCK + 77) * 1e3).astype(dtype)
    want = _model(x)
    partials = c_sum.blocks(x)
    c_sum.sum_blocks(x, partials, threads)
    assert partials.tobytes() == want.tobytes()
    assert _full_sum(x, threads).tobytes() == np.add.reduce(want).tobytes()


def test_sum_through_the_frontend_takes_the_c_blocks():
    import dispatchtorch as dt
    x = rng.standard_normal((1024, 1031)).astype(np.float32)
    want = np.add.reduce(_model(x.reshape(-1)))
    assert dt.tensor(x).sum().numpy().tobytes() == want.tobytes()


_CHILD = """
import os, numpy as np
tasks = lambda: len(os.listdir("/proc/self/task"))
from dispatchtorch_cpu import c_sum
x = np.ones(1 << 20, np.float32)
c_sum.available(x.dtype)
before = tasks()
parts = c_sum.blocks(x)
c_sum.sum_blocks(x, parts, 2)
print(tasks() - before, os.environ.get("GOMP_SPINCOUNT"), float(np.add.reduce(parts)))
"""


def _child(**env):
    """_CHILD's output in a fresh process whose environment has no libgomp setting but
    the given ones."""
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env={**base, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_team_call_starts_an_openmp_worker_and_leaves_the_environment_as_it_was():
    started, spin, total = _child()
    assert int(started) >= 1 and spin == "None" and float(total) == 1 << 20
    assert _child(GOMP_SPINCOUNT="5")[1] == "5"          # the user's choice is kept


_FORKS = """
import os, numpy as np
from dispatchtorch_cpu import c_sum
x = np.ones(1 << 20, np.float32)
c_sum.available(x.dtype)
parts = c_sum.blocks(x)
c_sum.sum_blocks(x, parts, 2)
pid = os.fork()
if pid == 0:
    mine = c_sum.blocks(x)
    c_sum.sum_blocks(x, mine, 2)
    os._exit(0 if float(np.add.reduce(mine)) == 1 << 20 else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_child_forked_after_a_team_sums_on_its_own_thread():
    """libgomp's pool is gone in a forked child: a team call there would hang."""
    done = subprocess.run([sys.executable, "-c", _FORKS], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["0"], done.stderr
