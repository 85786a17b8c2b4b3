"""docs/writing-a-backend.md stays true: its prim table is the catalogue's, and what it
names exists."""
import importlib.util
import re
from pathlib import Path

from dispatchtorch.backend import MEMORY_METHODS, PRIMS, Backend

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-backend.md"


def _prim_table_module():
    spec = importlib.util.spec_from_file_location("prim_table", ROOT / "docs" / "prim_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prim_table_is_current():
    doc = DOC.read_text()
    assert _prim_table_module().render(doc) == doc, \
        "docs/writing-a-backend.md is out of date: run python docs/prim_table.py"


def test_prim_table_has_a_row_per_prim_with_its_semantics():
    table = _prim_table_module().table()
    for spec in PRIMS.values():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{spec.name}` |"))
        assert spec.doc.replace("|", "\\|") in row


def test_check_mode_detects_a_stale_table(tmp_path, monkeypatch):
    module = _prim_table_module()
    stale = tmp_path / "writing-a-backend.md"
    stale.write_text(DOC.read_text().replace("| `exp` |", "| `exp_old` |"))
    monkeypatch.setattr(module, "DOC", stale)
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0 and module.main(["--check"]) == 0


def test_contract_members_are_documented():
    doc = DOC.read_text()
    for name in (*MEMORY_METHODS, "devices", "synchronize", "device_index", "api_version",
                 "unavailable_reason", "kernels", "DISPATCHTORCH_FALLBACK", "dispatchtorch.backends"):
        assert f"`{name}" in doc or name in doc, name
    # the optional members, each declared on Backend with its default
    for name in ("to_dlpack", "dlpack_device", "from_dlpack", "empty_cache", "set_num_threads",
                 "get_num_threads", "collectives_backends", "collectives_engine", "can_fuse",
                 "fuse_elementwise"):
        assert f"`{name}(" in doc or f"`{name}`" in doc, name
        assert hasattr(Backend, name), name
    for name in MEMORY_METHODS:
        assert hasattr(Backend, name)


def test_relative_links_point_at_files():
    doc = DOC.read_text()
    for target in re.findall(r"\]\((?!https?:|#)([^)#]+)", doc):
        if target == "conformance.md":      # written by the conformance suite's branch
            continue
        assert (DOC.parent / target).exists(), target
