"""The family row helpers (issue 13): rows are made only by them, and the public forms
they derive (torch.special names, written forms, per-operand domains) are the rows'."""
import pathlib
import re

import pytest

import dispatchtorch as dt
import dispatchtorch.special
from dispatchtorch.dispatch import OPS
from dispatchtorch.dispatch.registry import (OpDef, frontend_row, operand_domains, prim_row,
                                             special_functions)

PACKAGE = pathlib.Path(dt.__file__).parent
# the helpers themselves: define, composite, reduction_row, scan_row, nn_ops' Composite,
# prim_row / frontend_row (and register_op's own definition)
HELPERS = {"dispatch/registry.py", "ops/_elementwise.py", "ops/_composite.py", "ops/reduction_prims.py",
           "ops/scans.py", "ops/nn_ops/_row.py"}


def test_only_the_family_helpers_register_rows():
    callers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if re.search(r"\bregister_op\(", p.read_text(encoding="utf-8")))
    assert set(callers) <= HELPERS, set(callers) - HELPERS


def test_prim_row_refuses_a_name_outside_the_catalogue():
    with pytest.raises(ValueError, match="not in the prim catalogue"):
        prim_row("no_such_prim_xyz", kind="indexing")
    assert "no_such_prim_xyz" not in OPS


def test_frontend_row_refuses_a_kernel_kind():
    with pytest.raises(ValueError, match="kind 'elementwise' is not one of"):
        frontend_row("no_such_view_xyz", kind="elementwise")
    assert "no_such_view_xyz" not in OPS


def test_per_operand_domains_must_match_the_operands():
    with pytest.raises(ValueError, match="2 sample domains for 3 operands"):
        OpDef("no_such_op_xyz", kind="view", args=("a", "b", "c"), domain=((0, 1), (1, 2)))
    assert operand_domains(OPS["pow"]) == ((0.5, 2), (-2, 2))
    assert operand_domains(OPS["exp"]) == ((-10, 10),)
    assert operand_domains(OPS["igamma"]) == ((0.5, 3), (0.5, 3))


def test_torch_special_is_made_from_the_rows():
    sp = dispatchtorch.special
    # Forms.special aliases, and special_<x> rows as <x>
    assert sp.gammaln is dt.lgamma and sp.psi is dt.digamma and sp.expit is dt.sigmoid
    assert sp.i0e is OPS["special_i0e"].function and sp.zeta is OPS["special_zeta"].function
    assert sp.round is dt.round and sp.logsumexp is dt.logsumexp
    assert not hasattr(dt, "special_i0e") and not hasattr(dt.Tensor, "special_i0e")
    for name, fn in special_functions().items():
        assert getattr(sp, name) is fn
    x = dt.tensor([0.5, 1.5, 3.0], dtype=dt.float64)
    assert sp.gammaln(x).tolist() == pytest.approx([0.5723649429247001, -0.12078223763524522,
                                                    0.6931471805599453])


def test_written_forms_bind_function_method_and_inplace():
    # gather/scatter rows: their hand-written functions are the rows' forms, the `_` form
    # of a row without one is made from the function
    assert dt.scatter is OPS["scatter"].function is dt.Tensor.scatter
    assert dt.Tensor.index_add_ is OPS["index_add"].inplace_function
    assert dt.Tensor.scatter_add_ is OPS["scatter_add"].inplace_function
    assert not hasattr(dt.Tensor, "gather_")
    t = dt.zeros(2, 3)
    r = t.scatter_add_(1, dt.tensor([[0, 0, 2], [1, 1, 1]]), dt.ones(2, 3))
    assert r is t and t.tolist() == [[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]]
