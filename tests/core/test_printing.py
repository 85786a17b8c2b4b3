"""repr(tensor) equals PyTorch's character for character (recorded answers always;
PyTorch 2.13 itself where installed)."""
from __future__ import annotations

import json

import pytest

import dispatchtorch as dt
from tests.core.printing_cases import CASES, RECORDED, render

try:
    import torch
    TORCH = torch if torch.__version__.startswith("2.13") else None
except ImportError:
    TORCH = None

EXPECTED = json.loads(RECORDED.read_text())


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_recorded_pytorch(name):
    assert render(dt, name) == EXPECTED[name]


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_pytorch_itself(name):
    assert render(dt, name) == render(TORCH, name).replace("torch.", "dispatchtorch.")


def test_parameter_prints_as_pytorch_does():
    p = dt.nn.Parameter(dt.ones(2))
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"


def test_printoptions_context_restores_and_profile_is_checked():
    with dt._repr.printoptions(precision=1):
        assert repr(dt.tensor([1.25])) == "tensor([1.2])"
    assert repr(dt.tensor([1.25])) == "tensor([1.2500])"
    with pytest.raises(ValueError, match="profile"):
        dt.set_printoptions(profile="tiny")


@pytest.mark.skipif(TORCH is None, reason="PyTorch 2.13 is not installed")
def test_type_names_are_pytorchs():
    for name in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int8",
                 "uint8", "bool"):
        ours = dt.zeros(1, dtype=getattr(dt, name))
        theirs = TORCH.zeros(1, dtype=getattr(TORCH, name))
        assert ours.type() == theirs.type() and dt.typename(ours) == TORCH.typename(theirs)
