"""The meta device: shapes and dtypes without data."""
import tracemalloc

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch.backend import ALL_DTYPE_NAMES
from backend_dists import core_entry_points, ensure_core_backends


@pytest.fixture(scope="module", autouse=True)
def meta(tmp_path_factory):
    ensure_core_backends(tmp_path_factory.mktemp("core_eps"))


def test_root_pyproject_declares_meta_as_a_core_module():
    assert core_entry_points()["meta"] == "dispatchtorch._meta_backend"


def test_meta_module_imports_only_the_backend_api():
    import ast
    import inspect

    import dispatchtorch._meta_backend as m
    tree = ast.parse(inspect.getsource(m))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported <= {"__future__", "dispatchtorch.backend"}, imported


def test_backend_is_listed_ready_with_every_dtype():
    from dispatchtorch.backends import report
    entry = next(b for b in report() if b["name"] == "meta")
    assert entry["status"] == "ready" and entry["missing_prims"] == []
    assert set(entry["devices"][0]["dtypes"]) == set(ALL_DTYPE_NAMES)     # complex too


def test_factories_ops_and_views_give_shapes_and_dtypes():
    x = torch.empty(3, 4, device="meta")
    y = torch.ones(4, 5, dtype=torch.float64, device="meta")
    assert x.device == torch.device("meta") and x.is_meta
    z = x.double() @ y
    assert z.shape == (3, 5) and z.dtype is torch.float64 and z.is_meta
    s = (x.T + 1).sum(dim=0, keepdim=True)
    assert s.shape == (1, 3) and s.dtype is torch.float32
    assert (x > 0).dtype is torch.bool and x.argmax(dim=1).dtype is torch.int64
    assert torch.tensor([1, 2, 3], device="meta").dtype is torch.int64
    v = x[1:, ::2]
    assert v.shape == (2, 2) and v.stride() == (4, 2) and v.storage_offset() == 4
    assert v.untyped_storage_id() == x.untyped_storage_id()
    assert torch.randn(2, 7, device="meta").shape == (2, 7)


def test_cpu_tensor_moves_to_meta_but_not_back():
    c = torch.arange(6.0).reshape(2, 3)
    m = c.to("meta")
    assert m.shape == (2, 3) and m.dtype is torch.float32 and m.is_meta
    with pytest.raises(NotImplementedError, match="no data"):
        m.cpu()
    with pytest.raises(NotImplementedError, match="no data"):
        m.to("cpu")


@pytest.mark.parametrize("what", [
    lambda t: t.sum().item(),
    lambda t: t.tolist(),
    lambda t: t.numpy(force=True),
    lambda t: np.asarray(t),
    lambda t: bool(t[0, 0]),
    lambda t: float(t[0, 0]),
    lambda t: torch.nonzero(t),
    lambda t: torch.masked_select(t, t > 0),
    lambda t: t[t > 0],
    lambda t: t[torch.tensor([0, 5], device="meta")],
    lambda t: torch.gather(t, 1, torch.zeros(2, 2, dtype=torch.int64, device="meta")),
], ids=["item", "tolist", "numpy_force", "array", "bool", "float", "nonzero", "masked_select",
        "mask_index", "index_bounds", "gather_bounds"])
def test_data_dependent_ops_say_meta_tensors_have_no_data(what):
    t = torch.zeros(2, 3, device="meta")
    with pytest.raises(RuntimeError, match="meta tensor; no data"):
        what(t)


def test_numpy_refuses_like_pytorch_and_repr_has_no_values():
    t = torch.zeros(2, 3, device="meta")
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        t.numpy()
    assert repr(t) == "tensor(..., device='meta', size=(2, 3))"   # PyTorch's order


def _mlp(d_in, d_hidden, d_out, device):
    """A two-layer perceptron's parameters, initialised as nn.Linear does."""
    params = {}
    for name, (fan_in, fan_out) in {"l1": (d_in, d_hidden), "l2": (d_hidden, d_out)}.items():
        bound = 1 / fan_in ** 0.5
        params[name + ".weight"] = torch.empty(fan_out, fan_in, device=device).uniform_(-bound, bound)
        params[name + ".bias"] = torch.empty(fan_out, device=device).uniform_(-bound, bound)
    for p in params.values():
        p.requires_grad_(True)
    return params


def _forward(params, x):
    h = (x @ params["l1.weight"].T + params["l1.bias"]).relu()
    return (h @ params["l2.weight"].T + params["l2.bias"]).sigmoid()


def test_sizing_a_large_model_allocates_nothing():
    d_in, d_hidden, d_out = 10_000, 4_000, 1_000      # 44M parameters: 176 MB as float32
    tracemalloc.start()
    try:
        params = _mlp(d_in, d_hidden, d_out, "meta")
        x = torch.randn(64, d_in, device="meta")
        y = _forward(params, x)
        y.sum().backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n = sum(p.numel() for p in params.values())
    assert n == d_in * d_hidden + d_hidden + d_hidden * d_out + d_out
    assert sum(p.nbytes for p in params.values()) == 4 * n
    assert {k: tuple(p.shape) for k, p in params.items()} == {
        "l1.weight": (d_hidden, d_in), "l1.bias": (d_hidden,),
        "l2.weight": (d_out, d_hidden), "l2.bias": (d_out,)}
    assert y.shape == (64, d_out) and y.dtype is torch.float32 and y.is_meta
    for p in params.values():
        assert p.grad.shape == p.shape and p.grad.is_meta
    assert peak < 16 * 2 ** 20, f"sizing on meta allocated {peak / 2 ** 20:.0f} MiB"


def test_meta_shapes_agree_with_a_real_forward_pass():
    torch.manual_seed(0)
    real = _mlp(6, 5, 3, "cpu")
    meta = {k: v.detach().to("meta") for k, v in real.items()}
    x = torch.randn(4, 6)
    yr, ym = _forward(real, x), _forward(meta, x.to("meta"))
    assert ym.shape == yr.shape and ym.dtype is yr.dtype


def test_nn_model_on_meta_reports_parameters_and_output_shapes():
    nn = pytest.importorskip("dispatchtorch.nn")
    tracemalloc.start()
    torch.set_default_device("meta")
    try:
        model = nn.Sequential(nn.Linear(4000, 8000), nn.ReLU(), nn.Linear(8000, 10))
        out = model(torch.empty(8, 4000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        torch.set_default_device(None)
        tracemalloc.stop()
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [(8000, 4000), (8000,), (10, 8000), (10,)]
    assert sum(p.numel() for p in model.parameters()) == 4000 * 8000 + 8000 + 8000 * 10 + 10
    assert all(p.is_meta for p in model.parameters())
    assert out.shape == (8, 10) and out.is_meta
    assert peak < 16 * 2 ** 20, f"building on meta allocated {peak / 2 ** 20:.0f} MiB"
