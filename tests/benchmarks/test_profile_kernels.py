"""benchmarks.profile_kernels counts and times each CPU kernel call by op and shapes,
and puts the kernels back afterwards."""
import dispatchtorch as dt
from benchmarks.profile_kernels import profile
from dispatchtorch.dispatch import OPS


def test_counts_kernel_calls_by_op_and_shape_and_restores_the_table():
    a, b = dt.ones(3, 4), dt.ones(3, 4)
    (a + b).sum()                             # resolves the kernels (cached per device type)
    before = OPS["add"].kernels["cpu"]
    wall, stats = profile(lambda: (a + b).sum(), calls=3, threads=1)
    assert OPS["add"].kernels["cpu"] is before
    assert stats[("add", ((3, 4), (3, 4), (3, 4)))][0] == 3
    assert any(name == "sum" and count == 3 for (name, _), (count, _) in stats.items())
    assert wall > 0 and all(t >= 0 for _, t in stats.values())
