"""benchmarks/kernel_build.py runs its probe in two fresh processes sharing fresh cache
directories (on the cpu, which builds nothing: the probe and its parsing are what is
checked; no timing is asserted)."""
from benchmarks import kernel_build


def test_cold_and_warm_runs_each_use_every_op():
    runs = kernel_build.measure("cpu")
    assert [r[0] for r in runs] == list(kernel_build.RUNS)
    for _, start, ops, n in runs:
        assert n == 15 and start > 0 and ops > 0
