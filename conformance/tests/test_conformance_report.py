"""The verdict (prims on device, fallbacks), runs that survive a crash, the filters,
and the published reports: HTML (rendered in a real headless browser where one is
installed, else checked by a strict parser), the badge and the diff command."""
import json
import shutil
import subprocess
from pathlib import Path
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from dispatchtorch_conformance.diff import diff, render
from test_conformance_cli import run


def test_a_backend_without_kernels_is_not_conformant(subprocess_env, tmp_path):
    js = tmp_path / "r.json"
    p = run(subprocess_env, "--backend", "nokernels", "--ops", "add,sum", "--dtypes", "float32",
            "--no-contract", "--report", str(js))
    assert p.returncode == 1, p.stdout + p.stderr
    from dispatchtorch.backend.prims import PRIMS
    assert f"prims on device 0/{len(PRIMS)}, fell back 2" in p.stdout.splitlines()[-1]
    assert "NOT CONFORMANT" in p.stdout and "2 prims ran on the CPU" in p.stdout
    s = json.loads(js.read_text())["summary"]
    assert (s["conformant"], s["prims_on_device"], s["prims_fell_back"]) == (False, 0, 2)
    assert s["partial"] == ["--ops", "--dtypes", "--no-contract"]
    p = run(subprocess_env, "--backend", "nokernels", "--ops", "add", "--dtypes", "float32",
            "--no-contract", "--allow-fallback", "-q")
    assert p.returncode == 0, p.stdout
    assert p.stdout.startswith("CONFORMANT (with CPU fallbacks) (partial run: --ops")


def test_a_crash_without_isolate_writes_the_report_so_far(subprocess_env, tmp_path):
    js, html = tmp_path / "r.json", tmp_path / "r.html"
    p = run(subprocess_env, "--backend", "crashy", "--ops", "exp,neg", "--dtypes", "float32",
            "--no-contract", "--report", str(js), "--html", str(html))
    assert p.returncode == 3, p.stdout + p.stderr
    assert "the run died (SIGSEGV) in neg/float32, sample neg/float32/0d" in p.stderr
    assert "Fatal Python error" in p.stderr and "neg_crashing" in p.stderr   # faulthandler
    rep = json.loads(js.read_text())
    assert rep["cells"]["exp"]["float32"]["status"] == "ok"
    assert rep["cells"]["neg"]["float32"]["status"] == "crash"
    assert rep["summary"]["crashed"] == "neg/float32" and "crashed" in rep["summary"]["partial"]
    assert "crashed in neg/float32" in html.read_text()


def test_isolate_names_the_sample_and_skips_an_ops_dtypes_after_a_hang(subprocess_env, tmp_path):
    js = tmp_path / "r.json"
    p = run(subprocess_env, "--backend", "crashy", "--isolate", "--ops", "neg,sin", "--dtypes",
            "float32,float64,int32", "--timeout", "6", "--no-contract", "-j", "2",
            "--report", str(js))
    assert p.returncode == 1, p.stdout + p.stderr
    rep = json.loads(js.read_text())
    by_id = {r["id"]: r for r in rep["results"]}
    crash = by_id["neg/float32"]["message"]
    assert "while running neg/float32/0d" in crash and "neg_crashing" in crash
    # int32 comes first in the canonical order: its hang costs one timeout, not three
    assert by_id["sin/int32"]["outcome"] == "timeout"
    assert "in sample sin/int32/0d" in by_id["sin/int32"]["message"]
    for d in ("float32", "float64"):
        assert rep["cells"]["sin"][d]["status"] == "hung"
        assert by_id[f"sin/{d}"]["message"].startswith("not run (hung): sin/int32 hung")


def test_filters_list_and_usage_errors(subprocess_env):
    p = run(subprocess_env, "--list", "--ops", "sum", "--dtypes", "float32")
    assert p.stdout.split() == ["sum", "op", "sum", "float32"]
    p = run(subprocess_env, "--list", "--prims", "scatter_")
    assert {line.split()[0] for line in p.stdout.splitlines()} >= {"index_add_"}
    assert all(line.split()[2] == "scatter_" for line in p.stdout.splitlines())
    p = run(subprocess_env, "--backend", "meta")
    assert p.returncode == 2 and "meta backend has no values" in p.stderr
    p = run(subprocess_env, "--ops", "no_such_case")
    assert p.returncode == 2 and "no case matches --ops no_such_case" in p.stderr


def test_integer_failures_show_absolute_differences(fixture_backends):
    from dispatchtorch_conformance.cases import by_name
    from dispatchtorch_conformance.runner import Target, run_cell
    r = [x for x in run_cell(Target("b_int32sum"), by_name()["sum"], "int64")
         if x.failed][0]
    assert "max abs difference" in r.message and "rel" not in r.message
    assert r.max_rel is None


# -- the published reports --------------------------------------------------------------------

class StrictHTML(HTMLParser):
    """Every element closed in order (void elements excepted); no stray end tags."""
    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory, fixture_site):
    import os
    REPO = Path(__file__).resolve().parents[2]   # not `from conftest import`: under xdist
                                                 # another directory's conftest may own that name
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(fixture_site), str(REPO), str(REPO / "backends/cpu"),
                                         str(REPO / "conformance")])
    d = tmp_path_factory.mktemp("report")
    p = subprocess.run([sys.executable, "-m", "dispatchtorch_conformance", "--backend",
                        "b_halfsum", "--ops", "sum,add,exp", "--dtypes", "float16,float32",
                        "--report", str(d / "r.json"), "--html", str(d / "r.html"),
                        "--badge", str(d / "b.svg")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    return d


def test_html_report_is_well_formed_and_says_everything(fixture_report):
    text = (fixture_report / "r.html").read_text()
    parser = StrictHTML()
    parser.feed(text)
    parser.close()
    assert not parser.errors and parser.stack == [], parser.errors[:5]
    assert "http" not in text.replace("http://www.w3.org", "")      # self-contained
    assert text.index("Failures (") < text.index("Ops &times; dtypes")     # failures first
    assert "fails because `sum` (float16) fails" in text
    assert "NOT CONFORMANT" in text and "partial run" in text and "command line" in text
    assert "background:#f7b5b5" in text and "<details open>" in text
    assert "ulp" in text and "prims on device" in text


@pytest.mark.skipif(shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
                    reason="no headless chromium (CI installs Debian's in .ci/run)")
def test_html_report_renders_in_a_headless_browser(fixture_report, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    url = (fixture_report / "r.html").as_uri()
    flags = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + str(tmp_path)]
    dom = subprocess.run(flags + ["--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    # the browser's own parse of the page: the verdict, open families, coloured cells
    assert "NOT CONFORMANT" in dom and "<details open=\"\">" in dom
    assert dom.count("<td class=\"c\"") >= 6 and "fails because `sum` (float16) fails" in dom
    shot = tmp_path / "r.png"
    subprocess.run(flags + [f"--screenshot={shot}", "--window-size=1200,900", url],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 5000
    try:
        from PIL import Image
    except ImportError:
        return
    colours = {c for _, c in Image.open(shot).convert("RGB").getcolors(1 << 20) or []}
    assert (0xf7, 0xb5, 0xb5) in colours          # the verdict banner and FAIL cells are red


def test_badge_is_svg(fixture_report):
    root = ET.fromstring((fixture_report / "b.svg").read_text())
    assert root.tag.endswith("svg")
    text = "".join(root.itertext())
    from dispatchtorch.backend.prims import PRIMS
    assert "failing" in text and f"/{len(PRIMS)} prims" in text and "(partial)" in text


def test_diff_finds_new_failures_fixes_and_slowdowns(fixture_report, tmp_path, subprocess_env):
    old = json.loads((fixture_report / "r.json").read_text())
    new = json.loads(json.dumps(old))
    new["cells"]["exp"]["float32"]["status"] = "FAIL"
    fixed = next(k for k, c in old["cells"]["sum"].items() if c["status"] == "FAIL")
    new["cells"]["sum"][fixed]["status"] = "ok"
    new["cells"]["add"]["float32"]["seconds"] = old["cells"]["add"]["float32"]["seconds"] * 3 + 1
    new["prims"]["fell_back"] = ["cos"]
    d = diff(old, new)
    assert [k for k, _ in d["new_failures"]] == ["exp/float32"]
    assert [k for k, _ in d["fixed"]] == [f"sum/{fixed}"]
    assert [k for k, _ in d["slower"]] == ["add/float32"]
    assert d["new_fallbacks"] == [("cos", "falls back to the CPU")]
    assert render(d).splitlines()[-1] == "1 new failures, 1 fixed, 1 slower, 1 new fallbacks"
    (tmp_path / "new.json").write_text(json.dumps(new))
    p = run(subprocess_env, "diff", str(fixture_report / "r.json"), str(tmp_path / "new.json"))
    assert p.returncode == 1 and "new failures (1):" in p.stdout
    p = run(subprocess_env, "diff", str(fixture_report / "r.json"), str(fixture_report / "r.json"))
    assert p.returncode == 0 and p.stdout.strip().endswith("0 new failures, 0 fixed, 0 slower, "
                                                           "0 new fallbacks")


def test_new_backends_get_a_conformance_workflow():
    """`dispatchtorch-backends new` writes a GitHub Actions workflow that runs the suite,
    publishes every report and diffs against main's."""
    from dispatchtorch.backends.new import render
    text = render("acme")[".github/workflows/conformance.yml"]
    assert "\t" not in text and "__" not in text
    assert "dispatchtorch-conformance --backend acme" in text
    for needle in ("--html conformance.html", "--badge conformance.svg", "--report conformance.json",
                   "dispatchtorch-conformance diff base/conformance.json conformance.json",
                   "actions/upload-artifact", "pull_request"):
        assert needle in text, needle
    # top-level keys of the YAML mapping, in order, at column 0
    assert [line.split(":")[0] for line in text.splitlines()
            if line and not line.startswith((" ", "#"))] == ["name", "on", "jobs"]
