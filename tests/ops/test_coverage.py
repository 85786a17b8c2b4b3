"""The op table is complete: every op of the reference set (issue 6) has a schema row, a
kernel on the reference backend or a decomposition, a derivative rule (or a
differentiable decomposition) where it is differentiable, and sample cases; and
PyTorch's function, method and in-place forms exist."""
import pytest

import dispatchtorch as dt
from dispatchtorch.dispatch import OPS
from dispatchtorch.dispatch.registry import FRONTEND_KINDS
from dispatchtorch_cpu.kernels import KERNELS
from op_cases import CASES

# the reference set, by the issue's categories: public name -> the row that implements it
ELEMENTWISE = {
    "add": "add", "sub": "sub", "rsub": "sub", "mul": "mul", "div": "div", "true_divide": "div",
    "floor_divide": "floor_divide", "remainder": "remainder", "fmod": "fmod", "pow": "pow",
    "neg": "neg", "abs": "abs", "sign": "sign", "square": "square", "exp": "exp", "exp2": "exp2",
    "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "sqrt": "sqrt", "rsqrt": "rsqrt", "reciprocal": "reciprocal", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "sigmoid": "sigmoid", "logit": "logit",
    "relu": "relu", "floor": "floor", "ceil": "ceil", "round": "round", "trunc": "trunc",
    "frac": "frac", "clamp": "clamp", "clip": "clamp", "maximum": "maximum", "minimum": "minimum",
    "fmax": "fmax", "fmin": "fmin", "lerp": "lerp", "hypot": "hypot", "where": "where",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "nan_to_num": "nan_to_num",
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "logical_not": "logical_not", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "bitwise_not": "bitwise_not",
    "bitwise_left_shift": "bitwise_left_shift", "bitwise_right_shift": "bitwise_right_shift",
}
REDUCTIONS = {
    "sum": "sum", "mean": "mean", "prod": "prod", "amax": "amax", "amin": "amin", "max": "max",
    "min": "min", "argmax": "argmax", "argmin": "argmin", "all": "all", "any": "any",
    "var": "var", "std": "std", "var_mean": "var_mean", "std_mean": "std_mean",
    "logsumexp": "logsumexp", "norm": "norm", "linalg.vector_norm": "linalg_vector_norm",
    "count_nonzero": "count_nonzero", "cumsum": "cumsum", "cumprod": "cumprod",
    "cummax": "cummax", "cummin": "cummin",
}
LINALG = {
    "matmul": "matmul", "mm": "mm", "bmm": "bmm", "mv": "mv", "dot": "dot", "vdot": "dot",
    "outer": "outer", "addmm": "addmm", "baddbmm": "baddbmm", "einsum": "einsum",
    "tensordot": "tensordot", "linalg.norm": "linalg_norm", "linalg.matrix_norm": "linalg_matrix_norm",
}
SHAPE_INDEXING = {
    "reshape": "view", "view": "view", "view_as": "view", "permute": "permute",
    "transpose": "permute", "swapaxes": "permute", "t": "permute", "T": "permute", "mT": "permute",
    "expand": "expand", "expand_as": "expand", "broadcast_to": "expand",
    "broadcast_tensors": "broadcast_tensors", "squeeze": "view", "unsqueeze": "view",
    "flatten": "view", "unflatten": "view", "contiguous": "view", "narrow": "slice",
    "select": "slice", "movedim": "permute", "__getitem__": "slice", "__setitem__": "index_put",
    "cat": "cat", "concat": "cat", "stack": "cat", "hstack": "hstack", "vstack": "vstack",
    "split": "slice", "chunk": "slice", "tensor_split": "tensor_split", "unbind": "slice",
    "flip": "flip", "roll": "roll", "repeat": "repeat", "repeat_interleave": "repeat_interleave",
    "tile": "repeat", "tril": "tril", "triu": "triu", "diag": "diag", "diagonal": "slice",
    "gather": "gather", "scatter": "scatter", "scatter_add": "scatter_add",
    "scatter_reduce": "scatter_reduce", "index_select": "index_select", "index_add": "index_add",
    "index_put": "index_put", "take": "take", "take_along_dim": "take_along_dim",
    "masked_fill": "masked_fill", "masked_select": "masked_select",
    "masked_scatter": "masked_scatter", "nonzero": "nonzero", "argwhere": "argwhere",
    "sort": "sort", "argsort": "sort", "topk": "topk", "kthvalue": "kthvalue", "median": "median",
    "unique": "unique", "searchsorted": "searchsorted", "bincount": "bincount", "clone": "clone",
    "copy_": "clone",
}
CREATION = {
    "full": "full", "zeros": "zeros", "ones": "ones", "arange": "arange", "linspace": "linspace",
    "logspace": "logspace", "eye": "eye", "tril_indices": "tril_indices",
    "triu_indices": "triu_indices", "meshgrid": "meshgrid", "multinomial": "multinomial",
    "normal": "normal", "bernoulli": "bernoulli", "uniform_": "uniform_", "normal_": "normal_",
    "empty": "empty", "rand": "rand", "randn": "randn", "randint": "randint",
}
ISSUE = {**ELEMENTWISE, **REDUCTIONS, **LINALG, **SHAPE_INDEXING, **CREATION}
# PyTorch spells these as Tensor attributes or methods only
TENSOR_ONLY = {"T", "mT", "__getitem__", "__setitem__", "copy_", "contiguous", "view", "view_as",
               "expand", "expand_as", "repeat", "uniform_", "normal_"}
NON_DIFFERENTIABLE_KINDS = {"factory"}
# the nn layers' rows (ops/nn_ops/) have their sample cases in tests/nn and in the
# conformance suite, the optimizers' fused rows (ops/optim_ops.py) in
# tests/nn/test_fused_optim.py; every other row's are here
OWN = sorted(n for n, op in OPS.items() if op.kind not in ("nn", "optim"))
CASES_BY_OP = {}
for _c in CASES:
    CASES_BY_OP.setdefault(_c.op, []).append(_c)


def _public(name):
    if name in TENSOR_ONLY:
        return getattr(dt.Tensor, name, None)
    obj = dt
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


@pytest.mark.parametrize("name", sorted(ISSUE))
def test_issue_op_exists_with_a_row(name):
    assert _public(name) is not None, f"dispatchtorch has no public {name}"
    assert ISSUE[name] in OPS, f"{name}: no schema row {ISSUE[name]!r} in the op table"


@pytest.mark.parametrize("name", sorted(OPS))
def test_row_runs_somewhere(name):
    """A prim has a kernel on the reference backend; a composite has a decomposition
    (views, copies and factories are carried out by the frontend itself)."""
    op = OPS[name]
    if op.prim:
        assert name in KERNELS, f"prim {name} has no kernel on the reference backend"
    else:
        assert op.decomp is not None or op.kind in FRONTEND_KINDS, \
            f"composite {name} has no decomposition"


@pytest.mark.parametrize("name", OWN)
def test_row_has_samples(name):
    assert CASES_BY_OP.get(name), f"{name}: no sample cases (tests/ops/op_cases)"


@pytest.mark.parametrize("name", [n for n in OWN if OPS[n].differentiable])
def test_differentiable_row_has_rule_and_gradient_cases(name):
    op = OPS[name]
    assert op.grad is not None or op.decomp is not None, \
        f"{name} is differentiable but has neither a derivative rule nor a decomposition"
    assert op.kind not in NON_DIFFERENTIABLE_KINDS
    graded = [c for c in CASES_BY_OP.get(name, ()) if c.grad and
              any(d.startswith(("float", "bfloat")) for d in c.dtypes)]
    assert graded, f"{name} is differentiable but no sample case checks its gradient"


def test_every_row_is_documented():
    from tools import docgen
    assert docgen.OPS_DOC.read_text(encoding="utf-8") == docgen.ops_page(), \
        "docs/ops.md is out of date: run `python -m tools.docgen`"


def test_pytorch_method_and_inplace_forms_exist():
    """Where PyTorch has a Tensor method or an in-place `_` variant, so do we."""
    torch = pytest.importorskip("torch")
    missing = []
    for name in ISSUE:
        base = name.split(".")[-1]
        if name.startswith("linalg.") or name in CREATION:
            continue
        for form in (base, base + "_"):
            if hasattr(torch.Tensor, form) and not hasattr(dt.Tensor, form):
                missing.append(f"Tensor.{form}")
        if hasattr(torch, base) and not hasattr(dt, base) and base not in TENSOR_ONLY:
            missing.append(f"torch.{base}")
    assert not missing, f"missing PyTorch forms: {missing}"
