"""The command, its reports, expected-failure files, --isolate and the pytest plugin,
run as a user runs them (subprocesses), against the fixture backends."""
import json
import subprocess
import sys

import pytest


def run(env, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dispatchtorch_conformance", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_reports_and_exit_status(subprocess_env, tmp_path):
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    p = run(subprocess_env, "--backend", "fixture", "--ops", "add,exp,cos", "--dtypes",
            "float32,float64,int16", "--report", str(js), "--markdown", str(md),
            "--max-failures", "1000")
    assert p.returncode == 1, p.stderr
    out = p.stdout
    assert "FAIL add/float32/same/forward [max 1000 ulp, budget 0]" in out
    assert "ERROR exp/float32/" in out and "exp failed on backend 'fixture'" in out
    summary = out.strip().splitlines()[-1]
    assert " passed, " in summary and " failed" in summary and " skipped" in summary
    rep = json.loads(js.read_text())
    assert rep["format"] == "dispatchtorch-conformance/1"
    assert rep["backend"]["name"] == "fixture" and rep["backend"]["devices"][0]["name"]
    assert rep["environment"]["python"] and rep["environment"]["numpy"]
    cells = rep["cells"]
    assert cells["add"]["float32"]["status"] == "FAIL"
    assert cells["add"]["float64"]["status"] == "FAIL"     # 1000 ulp (its grads also raise)
    assert cells["add"]["int16"]["status"] == "n/c"
    cos = cells["cos"]["float32"]
    assert (cos["status"], cos["fallback"], cos["decomposed"]) == ("ok", ["cos"], False)
    assert cos["seconds"] > 0 and cos["ref_seconds"] > 0
    assert cells["exp"]["float32"]["status"] == "err"
    assert rep["summary"]["failed"] > 0 and rep["summary"]["line"] == summary
    worst = [r for r in rep["results"] if r["id"] == "add/float32/same/forward"][0]
    assert 5.9e-5 <= worst["max_rel"] <= 1.2e-4
    text = md.read_text()
    assert text.startswith("# dispatchtorch conformance: `fixture`")
    assert "| add |" in text and "## Failures" in text


def test_reference_passes_and_exits_zero(subprocess_env):
    p = run(subprocess_env, "--ops", "add,sum,view", "--dtypes", "float32,int64", "-q")
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 failed, 0 skipped" in p.stdout


def test_expected_failures(subprocess_env, tmp_path):
    xf = tmp_path / "xfails.txt"
    xf.write_text("# known issues of the fixture backend\n"
                  "add/float32          # off by 1000 ulp\n"
                  "cos/float32/prime    # listed, but passes (on the CPU): reported as XPASS\n"
                  "exp                  # raises\n"
                  "nothing/such         # matches nothing\n")
    p = run(subprocess_env, "--backend", "fixture", "--ops", "add,exp,cos", "--dtypes",
            "float32,float64", "--xfails", str(xf), "--no-contract")
    out = p.stdout
    assert "XPASS cos/float32/prime/forward" in out
    assert "unused expected-failure entry, line 5: nothing/such" in out
    assert "xfailed" in out.splitlines()[-1] and "xpassed" in out.splitlines()[-1]
    # add/float64's gradient failures are not listed, so the run still fails
    assert p.returncode == 1
    assert "FAIL add/float32" not in out and "ERROR exp/" not in out


def test_expected_failures_make_a_clean_run(subprocess_env, tmp_path):
    xf = tmp_path / "xfails.txt"
    xf.write_text("add*/float32   # add and add_alpha\nexp\n")
    p = run(subprocess_env, "--backend", "fixture", "--ops", "add,exp", "--dtypes", "float32",
            "--xfails", str(xf), "--no-contract", "-q")
    assert p.returncode == 0, p.stdout
    assert " 0 failed" in p.stdout and "xfailed" in p.stdout


def test_reproduce_one_case(subprocess_env):
    p = run(subprocess_env, "--backend", "fixture", "--case", "add/float32/bcast/forward")
    assert p.returncode == 1
    assert "input 0 (contig): float32[3, 1]" in p.stdout
    assert "reference (cpu) out: float32[3, 4]" in p.stdout
    assert "backend (fixture:0) out: float32[3, 4]" in p.stdout
    assert "FAIL     add/float32/bcast/forward" in p.stdout


def test_unknown_backend_is_a_usage_error(subprocess_env):
    p = run(subprocess_env, "--backend", "nosuchbackend")
    assert p.returncode == 2 and "no backend is installed for device type 'nosuchbackend'" in p.stderr


def test_coverage_command(subprocess_env):
    p = run(subprocess_env, "--coverage")
    assert p.returncode == 0, p.stdout
    assert "every op" in p.stdout


def test_isolate_reports_crash_and_timeout_and_goes_on(subprocess_env, tmp_path):
    js, skips = tmp_path / "r.json", tmp_path / "skips.txt"
    skips.write_text("sin/int32   # hangs too: no need to wait for it twice\n")
    p = run(subprocess_env, "--backend", "crashy", "--isolate", "--ops", "neg,sin,abs",
            "--dtypes", "float32,int32", "--timeout", "8", "--no-contract", "-j", "2",
            "--skips", str(skips), "--report", str(js))
    assert p.returncode == 1, p.stdout + p.stderr
    cells = json.loads(js.read_text())["cells"]
    assert cells["neg"]["float32"]["status"] == "crash"
    assert cells["neg"]["int32"]["status"] == "crash"          # a new worker carried on
    assert cells["sin"]["float32"]["status"] == "hang"
    assert cells["abs"]["float32"]["status"] == "ok" and cells["abs"]["int32"]["status"] == "ok"
    assert "CRASH neg/float32: the worker died (SIGSEGV)" in p.stdout
    assert "TIMEOUT sin/float32: no result within 8s" in p.stdout
    assert cells["sin"]["int32"]["status"] == "skip"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_plugin(subprocess_env, workers):
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                        "--pyargs", "dispatchtorch_conformance", "--dispatchtorch-backend",
                        "fixture", "--dispatchtorch-ops", "add,cos", "--dispatchtorch-dtypes",
                        "float32,int16,bool", *workers], env=subprocess_env, capture_output=True,
                       text=True, timeout=300)
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    assert "FAILED" in out and "test_op[add-float32]" in out
    assert "test_op[cos-float32]" not in out.split("short test summary")[-1]
    last = out.strip().splitlines()[-1]
    assert "failed" in last and "passed" in last and "skipped" in last


def test_entry_points_are_declared():
    """The console script and the pytest11 plugin, as pip installs them."""
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        dist = distribution("dispatchtorch-conformance")
    except PackageNotFoundError:
        pytest.skip("dispatchtorch-conformance is not installed (only on PYTHONPATH)")
    eps = {(e.group, e.name): e.value for e in dist.entry_points}
    assert eps[("console_scripts", "dispatchtorch-conformance")] == "dispatchtorch_conformance.cli:main"
    assert eps[("pytest11", "dispatchtorch_conformance")] == "dispatchtorch_conformance.pytest_plugin"


def test_the_package_imports_lazily():
    code = ("import sys, dispatchtorch_conformance as d; assert 'dispatchtorch' not in sys.modules; "
            "d.Case; assert 'dispatchtorch' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_isolate_reuses_a_worker_only_after_a_clean_op(subprocess_env, monkeypatch):
    """One worker runs op after op while they pass; a failing op's worker is not reused
    (whatever that op left in the process stays out of the next verdict)."""
    from dispatchtorch_conformance import isolate
    started = []

    class Counted(isolate.Worker):
        def __init__(self):
            super().__init__()
            started.append(self.proc.pid)
    monkeypatch.setattr(isolate, "Worker", Counted)
    monkeypatch.setenv("PYTHONPATH", subprocess_env["PYTHONPATH"])
    config = {"backend": "fixture", "device": 0, "strict": False, "skips": None}
    jobs = [(op, op, ["float32"]) for op in ("neg", "abs", "add", "sin", "sqrt")]
    results = isolate.run_isolated(config, jobs, 60.0, workers=1)
    outcome = {r.case: r.outcome for r in results if r.check == "forward"}
    assert outcome["add"] == "fail" and outcome["neg"] == outcome["sqrt"] == "pass", outcome
    assert len(started) == 2, started           # neg, abs, add in one; sin, sqrt in another
