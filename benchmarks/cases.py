"""The benchmark cases: each builds, for one framework, the callable that is timed.

A builder receives a Framework (`fw.mod` is numpy, torch or dispatchtorch) and the
case's size, makes its inputs from a fixed-seed numpy generator (so every framework
computes on the same values) and returns a zero-argument function. Where the
callable's result is the same across frameworks the harness checks it against the
reference (numpy, else PyTorch) before timing, so a fast wrong answer never counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import models


@dataclass(frozen=True)
class Target:
    """A goal from the issues: ours / `ref` (time per call) at most `max_ratio`."""

    ref: str                 # "numpy" or "torch"
    max_ratio: float
    text: str


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    build: Callable
    size: object
    quick_size: object = None
    numpy: bool = True              # numpy runs the same workload
    needs: tuple = ()               # attribute paths the torch-like module must have
    compare: bool = True            # results are comparable across frameworks
    rtol: float = 1e-5
    targets: dict = field(default_factory=dict)   # device type -> Target

    @property
    def group(self) -> str:
        return self.name.split("/")[0]

    def size_for(self, quick: bool):
        return self.quick_size if quick and self.quick_size is not None else self.size


def _rng():
    return np.random.default_rng(0)


def _randn(*shape):
    return _rng().standard_normal(shape, dtype=np.float32)


def _pair(n):
    rng = _rng()
    return rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)


# -- builders -----------------------------------------------------------------------------

def build_add(fw, n):
    x, y = _pair(n)
    a, b = fw.tensor(x), fw.tensor(y)
    return lambda: a + b


def build_mul(fw, n):
    x, y = _pair(n)
    a, b = fw.tensor(x), fw.tensor(y)
    return lambda: a * b


def build_sum(fw, n):
    a = fw.tensor(_randn(n))
    return lambda: a.sum()


def build_view(fw, n):
    a = fw.tensor(_randn(n))
    return lambda: a[2:5]


def build_index(fw, n):
    a = fw.tensor(_randn(n))
    idx = fw.tensor(np.array([0, 3, 7], dtype=np.int64))
    return lambda: a[idx]


def build_linear(fw, n):
    """A Linear(n, n) layer on a batch of one; numpy does x @ W.T + b."""
    rng = _rng()
    w = rng.standard_normal((n, n), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    x = fw.tensor(rng.standard_normal((1, n), dtype=np.float32))
    if fw.kind == "numpy":
        wt = w.T
        return lambda: x @ wt + bias
    layer = fw.mod.nn.Linear(n, n).to(fw.device)
    with fw.mod.no_grad():
        layer.weight.copy_(fw.tensor(w))
        layer.bias.copy_(fw.tensor(bias))
    return lambda: layer(x)


def build_mul_sum_backward(fw, n):
    x, y = _pair(n)
    a, b = fw.tensor(x, requires_grad=True), fw.tensor(y, requires_grad=True)

    def step():
        (a * b).sum().backward()
    return step


def build_matmul(fw, n):
    rng = _rng()
    a = fw.tensor(rng.standard_normal((n, n), dtype=np.float32))
    b = fw.tensor(rng.standard_normal((n, n), dtype=np.float32))
    return lambda: a @ b


def _classes(rng, shape, classes):
    return rng.integers(0, classes, shape, dtype=np.int64)


def build_train_mlp(fw, batch):
    tl = fw.mod
    rng = _rng()
    fw.manual_seed(0)
    model = models.mlp(tl).to(fw.device)
    opt = tl.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = fw.tensor(rng.standard_normal((batch, 512), dtype=np.float32))
    y = fw.tensor(_classes(rng, batch, 10))
    return models.training_step(tl, model, opt, x, y)


def build_train_cnn(fw, batch):
    tl = fw.mod
    rng = _rng()
    fw.manual_seed(0)
    model = models.digits_cnn(tl).to(fw.device)
    opt = tl.optim.Adam(model.parameters(), lr=3e-3)
    x = fw.tensor(rng.standard_normal((batch, 1, 8, 8), dtype=np.float32))
    y = fw.tensor(_classes(rng, batch, 10))
    return models.training_step(tl, model, opt, x, y)


def build_train_transformer(fw, size):
    batch, block = size
    tl = fw.mod
    rng = _rng()
    fw.manual_seed(0)
    model = models.tiny_transformer(tl, block=block).to(fw.device)
    opt = tl.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    x = fw.tensor(_classes(rng, (batch, block), 65))
    y = fw.tensor(_classes(rng, (batch, block), 65))
    return models.training_step(tl, model, opt, x, y)


def build_exp(fw, n):
    a = fw.tensor(_randn(n))
    return lambda: fw.mod.exp(a)


def build_chain(fw, n):
    """A chain of elementwise ops on large tensors: exp(a * b + c) * a - b."""
    rng = _rng()
    a, b, c = (fw.tensor(rng.standard_normal(n, dtype=np.float32) * 0.5) for _ in range(3))
    exp = fw.mod.exp
    return lambda: exp(a * b + c) * a - b


def build_softmax(fw, shape):
    a = fw.tensor(_randn(*shape))
    softmax = fw.mod.nn.functional.softmax
    return lambda: softmax(a, dim=-1)


def build_layer_norm(fw, shape):
    rng = _rng()
    a = fw.tensor(rng.standard_normal(shape, dtype=np.float32))
    w = fw.tensor(rng.standard_normal(shape[-1], dtype=np.float32))
    b = fw.tensor(rng.standard_normal(shape[-1], dtype=np.float32))
    layer_norm = fw.mod.nn.functional.layer_norm
    return lambda: layer_norm(a, (shape[-1],), w, b, 1e-5)


# parameter shapes of the optimizer cases: an MLP's layers
OPTIM_SHAPES = {"0.5M": [(512, 512), (512,), (512, 512), (512,)],            # 525k
                "10M": [(2048, 2048), (2048,), (2048, 2048), (2048,), (1024, 1536), (1536,)],
                "quick": [(64, 64), (64,)]}


def _optimizer_step(make):
    def build(fw, size):
        rng = _rng()
        params = []
        for shape in OPTIM_SHAPES[size]:
            p = fw.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=True)
            p.grad = fw.tensor(rng.standard_normal(shape, dtype=np.float32))
            params.append(p)
        opt = make(fw.mod.optim, params)
        return opt.step
    return build


build_adam_step = _optimizer_step(lambda optim, ps: optim.Adam(ps, lr=1e-3))
build_adamw_step = _optimizer_step(lambda optim, ps: optim.AdamW(ps, lr=1e-3, weight_decay=0.01))
build_sgd_step = _optimizer_step(lambda optim, ps: optim.SGD(ps, lr=1e-3, momentum=0.9))


def build_train_mlp_adam(fw, batch):
    tl = fw.mod
    rng = _rng()
    fw.manual_seed(0)
    model = models.mlp(tl).to(fw.device)
    opt = tl.optim.Adam(model.parameters(), lr=1e-3)
    x = fw.tensor(rng.standard_normal((batch, 512), dtype=np.float32))
    y = fw.tensor(_classes(rng, batch, 10))
    return models.training_step(tl, model, opt, x, y)


def build_loader_epoch(fw, size):
    """One epoch of a shuffled DataLoader with worker processes over an in-memory
    TensorDataset (samples x 64 float32 features, batches of 64); returns the sum of
    the batch sums so every batch is read."""
    samples, workers = size
    rng = _rng()
    import importlib
    data = importlib.import_module(fw.mod.__name__ + ".utils.data")
    x = fw.tensor(rng.standard_normal((samples, 64), dtype=np.float32))
    y = fw.tensor(_classes(rng, samples, 10))
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=64, shuffle=True,
                                num_workers=workers)

    def epoch():
        total = 0.0
        for xb, _ in loader:
            total += float(xb.sum())
        return total
    return epoch


# -- the catalogue -------------------------------------------------------------------------

_OVERHEAD = {"cpu": Target("torch", 2.0, "within 2x of PyTorch's eager overhead")}
_NUMPY_CPU = Target("numpy", 1.1, "within 1.1x of numpy")
_AT_LEAST_TORCH = {"cpu": Target("torch", 1.0, "at least as fast as PyTorch (issue 21)")}
M = 4 * 1024 * 1024

CASES = [
    Case("tiny/add", "a + b, 10 float32 elements", build_add, 10, targets=_OVERHEAD),
    Case("tiny/mul", "a * b, 10 float32 elements", build_mul, 10, targets=_OVERHEAD),
    Case("tiny/sum", "a.sum(), 10 float32 elements", build_sum, 10, targets=_OVERHEAD),
    Case("tiny/view", "a[2:5], a view of 10 elements", build_view, 10, targets=_OVERHEAD),
    Case("tiny/index", "a[idx], 3 int64 indices into 10 elements", build_index, 10,
         targets=_OVERHEAD),
    Case("tiny/linear", "nn.Linear(10, 10) forward on a (1, 10) batch (numpy: x @ W.T + b)",
         build_linear, 10, needs=("nn.Linear", "no_grad"), rtol=1e-4, targets=_OVERHEAD),
    Case("graph/mul_sum_backward", "(a * b).sum().backward(), 10 elements",
         build_mul_sum_backward, 10, numpy=False, compare=False,
         targets={"cpu": Target("torch", 1.0, "faster than PyTorch")}),
    Case("large/add", "a + b, 4M float32 elements", build_add, M, quick_size=65536,
         targets={"cpu": _NUMPY_CPU, "opencl": Target("numpy", 1.0, "at least as fast as numpy")}),
    Case("large/sum", "a.sum(), 4M float32 elements", build_sum, M, quick_size=65536,
         rtol=1e-4, targets={"cpu": _NUMPY_CPU}),
    Case("matmul/1024", "a @ b, 1024x1024 float32", build_matmul, 1024, quick_size=128,
         rtol=1e-3, targets={"cpu": _NUMPY_CPU,
                             "opencl": Target("numpy", 4.0, "at least 25% of numpy's BLAS")}),
    Case("matmul/4096", "a @ b, 4096x4096 float32", build_matmul, 4096, quick_size=256,
         rtol=1e-3, targets={"cpu": _NUMPY_CPU}),
    Case("train/mlp", "SGD step of a 3x Linear(512) MLP, batch 128", build_train_mlp, 128,
         quick_size=16, numpy=False, compare=False, needs=models.MLP_NEEDS,
         targets={"cpu": Target("torch", 1 / 0.7, "at least 0.7x PyTorch's steps/s")}),
    Case("train/digits_cnn", "Adam step of the digits CNN, batch 64 of 1x8x8", build_train_cnn,
         64, quick_size=8, numpy=False, compare=False, needs=models.CNN_NEEDS,
         targets={"cpu": Target("torch", 1.3, "within 1.3x of PyTorch (issue 21)")}),
    Case("train/tiny_transformer", "AdamW step of the 2-layer d=64 causal transformer, "
         "batch 32 x 64 characters", build_train_transformer, (32, 64), quick_size=(2, 16),
         numpy=False, compare=False, needs=models.TRANSFORMER_NEEDS,
         targets={"cpu": Target("torch", 1.2, "within 1.2x of PyTorch (issue 21)")}),
    # issue 21: the training step at each library's own threads
    Case("train/mlp_adam", "Adam step of the 3x Linear(512) MLP, batch 128", build_train_mlp_adam,
         128, quick_size=16, numpy=False, compare=False,
         needs=models.MLP_NEEDS + ("optim.Adam",), targets=_AT_LEAST_TORCH),
    Case("large/exp", "exp(a), 4M float32 elements", build_exp, M, quick_size=65536,
         targets=_AT_LEAST_TORCH),
    Case("large/chain", "exp(a * b + c) * a - b, 4M float32 elements", build_chain, M,
         quick_size=65536, rtol=1e-5),
    Case("large/softmax", "F.softmax(a, dim=-1), a (4096, 1024) float32", build_softmax,
         (4096, 1024), quick_size=(64, 128), numpy=False, needs=("nn.functional.softmax",)),
    Case("large/layer_norm", "F.layer_norm over the last dim with weight and bias, (4096, 1024)",
         build_layer_norm, (4096, 1024), quick_size=(64, 128), numpy=False, rtol=1e-4,
         needs=("nn.functional.layer_norm",)),
    Case("optim/adam/0.5M", "Adam.step() alone, 525k float32 parameters in 4 tensors",
         build_adam_step, "0.5M", quick_size="quick", numpy=False, compare=False,
         needs=("optim.Adam",),
         targets={"cpu": Target("torch", 1.2, "within 1.2x of PyTorch (issue 21)")}),
    Case("optim/adam/10M", "Adam.step() alone, 10M float32 parameters in 6 tensors",
         build_adam_step, "10M", quick_size="quick", numpy=False, compare=False,
         needs=("optim.Adam",)),
    Case("optim/adamw/0.5M", "AdamW.step() alone, 525k float32 parameters", build_adamw_step,
         "0.5M", quick_size="quick", numpy=False, compare=False, needs=("optim.AdamW",)),
    Case("optim/adamw/10M", "AdamW.step() alone, 10M float32 parameters", build_adamw_step,
         "10M", quick_size="quick", numpy=False, compare=False, needs=("optim.AdamW",)),
    Case("optim/sgd_momentum/0.5M", "SGD(momentum=0.9).step() alone, 525k float32 parameters",
         build_sgd_step, "0.5M", quick_size="quick", numpy=False, compare=False,
         needs=("optim.SGD",)),
    Case("optim/sgd_momentum/10M", "SGD(momentum=0.9).step() alone, 10M float32 parameters",
         build_sgd_step, "10M", quick_size="quick", numpy=False, compare=False,
         needs=("optim.SGD",)),
    Case("data/loader_epoch", "one shuffled DataLoader epoch, num_workers=2, 4096 x 64 "
         "float32 samples in batches of 64", build_loader_epoch, (4096, 2), quick_size=(256, 2),
         numpy=False, compare=False, needs=("utils.data.DataLoader", "utils.data.TensorDataset")),
]

BY_NAME = {c.name: c for c in CASES}


def select(patterns: str | None) -> list[Case]:
    """Cases whose name contains any of the comma-separated patterns (all if None)."""
    if not patterns:
        return list(CASES)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    return [c for c in CASES if any(p in c.name for p in wanted)]
