"""The conformance suite as pytest tests: one test per op x dtype cell and one per
contract check. Collected by `pytest --pyargs dispatchtorch_conformance`; the
backend comes from `--dispatchtorch-backend` (see pytest_plugin.py)."""
import pytest

from dispatchtorch_conformance import contract
from dispatchtorch_conformance.cases import all_cases, by_name
from dispatchtorch_conformance.dtypes import ALL
from dispatchtorch_conformance.pytest_plugin import backend_name
from dispatchtorch_conformance.results import FAILING
from dispatchtorch_conformance.runner import SetupError, Target, cell_dtypes, run_cell, select
from dispatchtorch_conformance.xfails import PatternList, apply


def _csv(text):
    return [p.strip() for p in text.split(",") if p.strip()] if text else None


def pytest_generate_tests(metafunc):
    config = metafunc.config
    if "conformance_cell" in metafunc.fixturenames:
        cases = select(all_cases(), _csv(config.getoption("--dispatchtorch-ops")))
        dtypes = _csv(config.getoption("--dispatchtorch-dtypes"))
        cells = [(c.name, d) for c in cases for d in cell_dtypes(c, dtypes)]
        metafunc.parametrize("conformance_cell", cells, ids=[f"{c}-{d}" for c, d in cells])
    if "contract_check" in metafunc.fixturenames:
        ids = contract.names(ALL)
        metafunc.parametrize("contract_check", ids, ids=[i.replace("/", "-") for i in ids])


@pytest.fixture(scope="session")
def conformance_target(request):
    config = request.config
    try:
        return Target(backend_name(config), config.getoption("--dispatchtorch-device"),
                      config.getoption("--dispatchtorch-no-fallback"))
    except SetupError as exc:
        return exc


@pytest.fixture(scope="session")
def conformance_lists(request):
    config = request.config
    xf, sk = config.getoption("--dispatchtorch-xfails"), config.getoption("--dispatchtorch-skips")
    return (PatternList.load(xf) if xf else None, PatternList.load(sk) if sk else None)


def _verdict(results, xfails):
    apply(results, xfails)
    bad = [r for r in results if r.outcome in FAILING]
    if bad:
        pytest.fail("\n".join(f"{r.outcome.upper()} {r.id}: {r.message}" for r in bad),
                    pytrace=False)
    xpass = [r for r in results if r.outcome == "xpass"]
    if xpass:
        pytest.fail(xpass[0].message, pytrace=False)
    if results and all(r.outcome == "skip" for r in results):
        pytest.skip(results[0].message)
    xfail = [r for r in results if r.outcome == "xfail"]
    if xfail:
        pytest.xfail(f"{len(xfail)} expected failures ({xfail[0].expected_failure})")


def _target(conformance_target):
    if isinstance(conformance_target, SetupError):
        pytest.fail(f"backend unusable: {conformance_target}", pytrace=False)
    return conformance_target


def test_op(conformance_target, conformance_cell, conformance_lists):
    target = _target(conformance_target)
    name, dtype = conformance_cell
    xfails, skips = conformance_lists
    _verdict(run_cell(target, by_name()[name], dtype, skips=skips), xfails)


def test_contract(conformance_target, contract_check, conformance_lists):
    target = _target(conformance_target)
    xfails, skips = conformance_lists
    _, _, dtype = contract_check.partition("/")
    if dtype and dtype not in target.dtypes:
        pytest.skip(f"device {target.device} does not claim dtype {dtype}")
    if skips is not None and skips.match("contract/" + contract_check):
        pytest.skip("listed in the skips file")
    _verdict([contract.run_one(target, contract_check)], xfails)
