"""dispatchtorch's public names in torch.nn and its sub-namespaces against PyTorch's
(dev-only: skipped without PyTorch). A name PyTorch has must exist here or be listed
below with the reason it is absent (docs/nn.md carries the same list); a listed name
that exists fails the test too, so the list stays true."""
from __future__ import annotations

import importlib
import types

import pytest

NAMESPACES = ["nn", "nn.functional", "nn.init", "nn.modules", "nn.utils", "nn.utils.rnn",
              "nn.utils.parametrize", "nn.utils.parametrizations", "nn.utils.stateless"]

# PyTorch's implementation helpers that its namespaces happen to expose (imports and
# TorchScript/typing plumbing), not API a program uses.
NOT_API = {
    "nn.functional": {"BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "DType",
                      "TYPE_CHECKING", "boolean_dispatch", "handle_torch_function",
                      "has_torch_function", "has_torch_function_unary",
                      "has_torch_function_variadic", "reproducibility_notes",
                      "sparse_support_notes", "tf32_notes", "grad"},
}

# Deliberately absent, with the reason (docs/nn.md, "What is not here").
ABSENT = {
    "nn": {
        "intrinsic": "quantization (fused quantized modules): no quantized dtypes",
        "qat": "quantization-aware training: no quantized dtypes",
        "quantizable": "quantization: no quantized dtypes",
        "quantized": "quantization: no quantized dtypes",
    },
    "nn.functional": {
        "scaled_mm": "float8 scaled matmul: float8 tensors here are storage-only, as most of "
                     "PyTorch's float8 ops (docs/dtypes.md)",
        "scaled_grouped_mm": "float8 grouped matmul: float8 tensors are storage-only",
        "grouped_mm": "grouped (MoE) matmul over offsets: not in the op set",
        "ScalingType": "an enum of scaled_mm",
        "SwizzleType": "an enum of scaled_mm",
    },
}

# Owned by other work streams (torch.nn.parallel: the distributed engineer); present
# or absent, either is accepted here.
ELSEWHERE = {"nn": {"parallel"}}


def _public(mod):
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in names:
        if n.startswith("_"):
            continue
        v = getattr(mod, n, None)
        if isinstance(v, types.ModuleType) and not v.__name__.startswith("torch.nn"):
            continue          # math, warnings, torch, numpy ... imported by the module
        if getattr(v, "__module__", "") in ("typing", "typing_extensions", "collections.abc"):
            continue
        if n == "Tensor":
            continue
        out.append(n)
    return sorted(set(out))


def coverage(torch):
    """{namespace: (present, api names, missing-and-unlisted)}."""
    report = {}
    for ns in NAMESPACES:
        theirs = importlib.import_module("torch." + ns)
        ours = importlib.import_module("dispatchtorch." + ns)
        api = [n for n in _public(theirs) if n not in NOT_API.get(ns, set())]
        present = [n for n in api if hasattr(ours, n)]
        unlisted = [n for n in api if not hasattr(ours, n) and n not in ABSENT.get(ns, {})
                    and n not in ELSEWHERE.get(ns, set())]
        report[ns] = (present, api, unlisted)
    return report


def test_no_pytorch_name_is_missing_without_a_reason(torch):
    missing = {ns: u for ns, (_, _, u) in coverage(torch).items() if u}
    assert not missing, f"newly missing names (implement, or list them in ABSENT): {missing}"


def test_the_absent_list_is_true(torch):
    for ns, names in ABSENT.items():
        ours = importlib.import_module("dispatchtorch." + ns)
        theirs = importlib.import_module("torch." + ns)
        for n in names:
            assert not hasattr(ours, n), f"{ns}.{n} exists now: remove it from ABSENT"
            assert hasattr(theirs, n), f"torch.{ns}.{n} is gone: remove it from ABSENT"


@pytest.mark.parametrize("ns", ["nn", "nn.functional", "nn.modules", "nn.init", "nn.utils"])
def test_namespace_covers_95_percent(torch, ns):
    present, api, _ = coverage(torch)[ns]
    assert len(present) >= 0.95 * len(api), (ns, len(present), len(api))


if __name__ == "__main__":          # the per-namespace counts for docs/nn.md
    import torch as _torch
    for ns, (present, api, _) in coverage(_torch).items():
        print(f"torch.{ns}: {len(present)}/{len(api)} ({100 * len(present) / len(api):.1f}%)")


# signature differences kept on purpose: Conv*d take the output_padding their shared
# base needs; Hardtanh's min_value / max_value are long-deprecated aliases; the
# containers' forward is never called; RNNBase runs forward itself (PyTorch's raises).
SIGNATURE_EXCEPTIONS = {("Conv1d", "__init__"), ("Conv2d", "__init__"), ("Conv3d", "__init__"),
                        ("Hardtanh", "__init__"), ("ModuleDict", "forward"),
                        ("ModuleList", "forward"), ("ParameterDict", "forward"),
                        ("ParameterList", "forward"), ("RNNBase", "forward")}


def test_layer_signatures_take_pytorchs_argument_names(torch):
    """The same argument names in the same order for every layer's __init__ and forward
    (defaults may be spelled differently, e.g. activation="relu" for F.relu)."""
    import inspect
    import dispatchtorch.nn as ours

    def names(f):
        try:
            return [p.name for p in inspect.signature(f).parameters.values() if p.name != "self"]
        except (TypeError, ValueError):
            return None
    diffs = []
    for name in torch.nn.modules.__all__:
        theirs, mine = getattr(torch.nn, name), getattr(ours, name, None)
        if mine is None or not isinstance(theirs, type):
            continue
        for meth in ("__init__", "forward"):
            a, b = names(getattr(mine, meth, None)), names(getattr(theirs, meth, None))
            if a is not None and b is not None and a != b and \
                    (name, meth) not in SIGNATURE_EXCEPTIONS:
                diffs.append((name, meth, a, b))
    assert not diffs, diffs
