"""benchmarks/compile_bench.py runs and checks compiled against eager before timing
(no timing is asserted)."""
from benchmarks import compile_bench


def test_every_case_runs_quick_and_matches_eager():
    for case in compile_bench.CASES:
        r = compile_bench.measure(case, "cpu", quick=True, repeats=1)
        assert r["case"] == case and r["eager_ms"] > 0 and r["compiled_ms"] > 0
