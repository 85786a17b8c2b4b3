"""The benchmark harness: end to end on a quick case, its files, and its honesty rules
(skips name what is missing, wrong results are never timed). No timed assertions."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from benchmarks import __main__ as cli
from benchmarks import cases, runner, timer
from benchmarks.cases import Case
from benchmarks.frameworks import numpy_framework, ours_framework, torch_framework

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_cli(tmp_path, *extra):
    return cli.main(["-k", "tiny/add", "--quick", "--repeats", "2", "--device", "cpu",
                     "--out", str(tmp_path), *extra])


def load(tmp_path):
    with open(tmp_path / "benchmarks.json") as f:
        return json.load(f)


def test_quick_case_end_to_end_writes_json_and_png(tmp_path, capsys):
    assert run_cli(tmp_path) == 0
    doc = load(tmp_path)
    assert [c["threads"] for c in doc["cases"]] == ["default", "1 thread"]   # both, one run
    case = doc["cases"][1]
    assert case["name"] == "tiny/add" and case["size"] == 10
    ours = case["entries"]["ours:cpu"]
    assert ours["status"] == "ok" and ours["timing"]["repeats"] == 2
    assert ours["timing"]["median_s"] > 0 and len(ours["timing"]["samples_s"]) == 2
    numpy_samples = case["entries"]["numpy"]["timing"]["samples_s"]
    paired = sorted(o / n for o, n in zip(ours["timing"]["samples_s"], numpy_samples))
    assert case["ratios"]["ours:cpu"]["numpy"] == pytest.approx((paired[0] + paired[1]) / 2)
    assert case["ratios"]["ours:cpu"]["numpy_ratio_of_medians"] == pytest.approx(
        ours["timing"]["median_s"] / case["entries"]["numpy"]["timing"]["median_s"])
    assert case["ratios"]["ours:cpu"]["target"]["ref"] == "torch"
    assert doc["meta"]["frameworks"]["ours:cpu"]["kind"] == "dispatchtorch"
    png = (tmp_path / "benchmarks.png").read_bytes()
    assert png.startswith(PNG_MAGIC)
    import matplotlib.image
    img = matplotlib.image.imread(tmp_path / "benchmarks.png")
    assert img.shape[0] > 100 and img.shape[1] > 100
    table = capsys.readouterr().out
    assert "tiny/add" in table and "ours/numpy" in table and "ours/torch" in table


def test_saved_run_replays_to_the_same_table(tmp_path, capsys):
    assert run_cli(tmp_path, "--no-chart") == 0
    first = capsys.readouterr().out
    replot = tmp_path / "replot"
    assert cli.main(["--from-json", str(tmp_path / "benchmarks.json"), "--out", str(replot)]) == 0
    again = capsys.readouterr().out
    table = first[first.index("case "):first.index("\nwrote")].strip()
    assert table in again
    assert (replot / "benchmarks.png").read_bytes().startswith(PNG_MAGIC)


def test_torch_column_present_when_installed(tmp_path):
    pytest.importorskip("torch")
    assert run_cli(tmp_path, "--no-chart") == 0
    case = load(tmp_path)["cases"][0]
    assert case["entries"]["torch"]["status"] == "ok"
    assert case["ratios"]["ours:cpu"]["torch"] > 0


def test_runs_without_torch(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)      # `import torch` raises ImportError
    fw, why = torch_framework()
    assert fw is None and "not installed" in why
    assert run_cli(tmp_path) == 0
    doc = load(tmp_path)
    case = doc["cases"][0]
    assert "torch" not in case["entries"]
    assert case["ratios"]["ours:cpu"]["torch"] is None
    assert case["ratios"]["ours:cpu"]["target"]["met"] is None
    assert "not installed" in doc["meta"]["torch_missing"]
    assert (tmp_path / "benchmarks.png").exists()
    assert "torch: not run" in capsys.readouterr().out


def test_case_selection():
    assert [c.name for c in cases.select("matmul")] == ["matmul/1024", "matmul/4096"]
    assert [c.name for c in cases.select("tiny/sum,large/sum")] == ["tiny/sum", "large/sum"]
    assert cases.select(None) == cases.CASES
    assert cli.main(["-k", "no-such-case", "--out", "unused"]) == 2


def _frameworks():
    return [numpy_framework(), ours_framework("cpu")]


def test_missing_api_is_skipped_with_its_name():
    case = Case("test/needs", "needs an API nobody has", lambda fw, n: (lambda: None), 1,
                numpy=False, needs=("nn.NoSuchLayer", "add"))
    res = runner.run_case(case, _frameworks(), runner.Settings.quick_mode())
    e = res.entries["ours:cpu"]
    assert e.status == "skipped" and e.timing is None
    assert e.reason == "dispatchtorch has no nn.NoSuchLayer yet"
    assert "numpy" not in res.entries


def test_wrong_result_is_not_timed():
    def build(fw, n):
        a = fw.tensor(np.arange(n, dtype=np.float32))
        return (lambda: a + 1) if fw.is_ours else (lambda: a + 2)
    case = Case("test/wrong", "ours computes a different value", build, 5)
    res = runner.run_case(case, _frameworks(), runner.Settings.quick_mode())
    assert res.entries["numpy"].status == "ok"
    ours = res.entries["ours:cpu"]
    assert ours.status == "wrong" and ours.timing is None
    assert "max abs error 1" in ours.reason
    assert res.ratio("ours:cpu", "numpy") is None


def test_error_in_a_framework_is_reported_and_others_still_run():
    def build(fw, n):
        if fw.is_ours:
            raise ValueError("boom")
        return lambda: np.zeros(n)
    case = Case("test/error", "ours raises", build, 3)
    res = runner.run_case(case, _frameworks(), runner.Settings.quick_mode(), log=lambda s: None)
    assert res.entries["ours:cpu"].status == "error"
    assert res.entries["ours:cpu"].reason == "ValueError: boom"
    assert res.entries["numpy"].status == "ok" and res.entries["numpy"].timing.samples


def test_a_failure_after_the_first_call_is_an_error_not_a_crash():
    def build(fw, n):
        calls = []

        def fn():
            calls.append(1)
            if fw.is_ours and len(calls) > 3:
                raise RuntimeError("fails later")
            return np.zeros(n) if fw.kind == "numpy" else fw.mod.zeros(n, dtype=fw.mod.float64)
        return fn
    case = Case("test/later", "ours fails after a few calls", build, 3)
    res = runner.run_case(case, _frameworks(), runner.Settings.quick_mode(), log=lambda s: None)
    ours = res.entries["ours:cpu"]
    assert ours.status == "error" and ours.reason == "RuntimeError: fails later"
    assert ours.timing is None and res.ratio("ours:cpu", "numpy") is None
    assert res.entries["numpy"].status == "ok" and len(res.entries["numpy"].timing.samples) == 3


def test_every_case_builds_and_agrees_on_torch_and_ours():
    """Each case runs (at its quick size) on PyTorch and on our cpu; where ours lacks
    an API the case is skipped, and it never errors or disagrees."""
    fws = _frameworks()
    torch_fw, _ = torch_framework()
    if torch_fw is not None:
        fws.insert(1, torch_fw)
    settings = runner.Settings.quick_mode()
    for case in cases.CASES:
        res = runner.prepare(case, fws, case.size_for(True), settings, log=lambda s: None)
        for label, e in res.entries.items():
            assert e.status in ("ok", "skipped"), (case.name, label, e.reason)
        if torch_fw is not None:
            assert res.entries["torch"].status == "ok", case.name


class FakeClock:
    """perf_counter that advances only when the timed function runs."""

    def __init__(self, per_call):
        self.now, self.per_call = 0.0, per_call

    def __call__(self):
        return self.now

    def fn(self):
        self.now += self.per_call


def test_calibrate_picks_the_smallest_sufficient_batch(monkeypatch):
    clock = FakeClock(per_call=0.003)
    monkeypatch.setattr(timer.time, "perf_counter", clock)
    number, seconds = timer.calibrate(clock.fn, min_batch_s=0.1)
    assert number == 50 and seconds == pytest.approx(0.15)        # 20 * 3 ms < 0.1 <= 50 * 3 ms
    assert timer.calibrate(clock.fn, min_batch_s=0.001) == (1, pytest.approx(0.003))
    assert timer.time_batch(clock.fn, 10) == pytest.approx(0.003)


def test_ratio_pairs_the_batches_of_each_round():
    res = runner.Result(cases.BY_NAME["tiny/add"], 10)
    res.entries["numpy"] = runner.Entry("numpy", "numpy", timing=timer.Timing(1, [1.0, 4.0, 2.0]))
    res.entries["ours:cpu"] = runner.Entry("ours:cpu", "dispatchtorch",
                                           timing=timer.Timing(1, [2.0, 8.0, 10.0]))
    assert res.ratio("ours:cpu", "numpy") == 2.0          # median of 2, 2, 5
    assert res.ratio_of_medians("ours:cpu", "numpy") == 4.0
    assert res.ratio("ours:cpu", "torch") is None


def test_timing_statistics():
    t = timer.Timing(number=4, samples=[5.0, 1.0, 3.0, 2.0, 4.0])
    assert t.median == 3.0
    assert t.spread == (2.0, 4.0)
    assert timer.Timing(1, [2.0, 1.0]).spread == (1.0, 2.0)
    d = t.as_dict()
    assert d["min_s"] == 1.0 and d["max_s"] == 5.0 and d["repeats"] == 5


def test_profile_ops_attributes_time_to_our_functions(capsys):
    import dispatchtorch
    from benchmarks import profile_ops
    fns = profile_ops.snippets(dispatchtorch)
    assert {"add", "sum", "view", "index", "mul_sum_backward"} <= set(fns)
    us, rows = profile_ops.report("add", fns["add"], calls=50, top=5)
    assert us > 0
    names = [where for _, _, _, where in rows]
    assert any(w.endswith("(binary)") and "_elementwise.py" in w for w in names)
    assert "== add:" in capsys.readouterr().out


def test_device_selection_follows_the_backend_report(monkeypatch):
    import dispatchtorch.backends as backends
    from benchmarks import frameworks
    fake = [
        {"name": "cpu", "status": "ready", "error": "", "devices": [{"index": 0}]},
        {"name": "opencl", "status": "ready", "error": "", "devices": [{"index": 0}, {"index": 1}]},
        {"name": "cuda", "status": "unavailable", "error": "no driver", "devices": []},
    ]
    monkeypatch.setattr(backends, "report", lambda: fake)
    devices, why_not = frameworks.select_devices(None)
    assert devices == ["cpu", "opencl:0", "opencl:1"]
    assert why_not == {"cuda": "unavailable: no driver"}
    assert frameworks.select_devices("opencl")[0] == ["opencl:0", "opencl:1"]
    assert frameworks.select_devices("cpu,opencl:1")[0] == ["cpu", "opencl:1"]
    chosen, missing = frameworks.select_devices("cuda,vulkan")
    assert chosen == [] and missing == {"cuda": "unavailable: no driver",
                                        "vulkan": "no such ready device"}


def test_threads_option_limits_every_pool(tmp_path):
    pytest.importorskip("threadpoolctl")
    assert run_cli(tmp_path, "--no-chart", "--threads", "1") == 0
    doc = load(tmp_path)
    assert [c["threads"] for c in doc["cases"]] == ["1 thread"]
    counts = doc["meta"]["thread_settings"]["1 thread"]
    assert set(counts) >= {"numpy", "ours:cpu"} and set(counts.values()) == {1}


def test_thread_settings_set_each_library_before_its_batches():
    pytest.importorskip("threadpoolctl")
    import dispatchtorch as dt
    from benchmarks.threads import BlasControl, settings_for
    blas = BlasControl()
    assert blas.libs, "numpy's BLAS"
    fws = [numpy_framework(), ours_framework("cpu")]
    torch_fw, _ = torch_framework()
    if torch_fw is not None:
        fws.append(torch_fw)
    before = dt.get_num_threads()
    default, one = settings_for("0,1", fws, blas, {"numpy": 3})
    try:
        one.activation(fws[0])()
        assert blas.get() == 1
        default.activation(fws[0])()
        assert blas.get() == 3                         # numpy's own default
        default.activation(fws[1])()
        assert blas.get() == 1 and dt.get_num_threads() == before   # ours: its pool, BLAS 1
        one.activation(fws[1])()
        assert dt.get_num_threads() == 1
        if torch_fw is not None:
            torch_default = default.count(torch_fw)
            one.activation(torch_fw)()
            assert torch_fw.mod.get_num_threads() == 1
            default.activation(torch_fw)()
            assert torch_fw.mod.get_num_threads() == torch_default
    finally:
        dt.set_num_threads(before)
        blas.set(1)
    with pytest.raises(ValueError, match="--threads"):
        settings_for("-1", fws, blas, {})


def test_runs_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert run_cli(tmp_path) == 0
    assert (tmp_path / "benchmarks.json").exists()
    assert not (tmp_path / "benchmarks.png").exists()
    assert "no chart: matplotlib is not installed" in capsys.readouterr().out
