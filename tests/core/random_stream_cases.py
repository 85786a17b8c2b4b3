"""Seeded random calls whose results must equal PyTorch's CPU generator bit for bit.

Each case is `name -> fn(T)` with T the module (`torch` or `dispatchtorch`), so the same
expression runs on both. `python -m tests.core.random_stream_cases` (with torch
installed) rewrites the recorded answers the tests use where torch is absent.
"""
from __future__ import annotations

import hashlib
import json
import pathlib

import numpy as np

SEEDS = (0, 1, 1234)
RECORDED = pathlib.Path(__file__).with_name("data") / "random_streams.json"


def _gen(T):
    return T.Generator().manual_seed(7)


CASES = {
    "rand": lambda T: T.rand(3, 5),
    "rand_float64": lambda T: T.rand(7, dtype=T.float64),
    "rand_float16": lambda T: T.rand(7, dtype=T.float16),
    "rand_bfloat16": lambda T: T.rand(9, dtype=T.bfloat16),
    "randn_fill": lambda T: T.randn(1000),
    "randn_fill_tail": lambda T: T.randn(37),
    "randn_small_cached": lambda T: T.cat([T.randn(3), T.randn(5), T.randn(2)]),
    "randn_float64": lambda T: T.randn(100, dtype=T.float64),
    "randn_float64_small": lambda T: T.randn(5, dtype=T.float64),
    "randn_float16_blocks": lambda T: T.randn(64, dtype=T.float16),
    "randint": lambda T: T.randint(-5, 10, (20,)),
    "randint_wide": lambda T: T.randint(0, 2 ** 40, (20,)),
    "randint_int32": lambda T: T.randint(0, 7, (20,), dtype=T.int32),
    "randperm": lambda T: T.randperm(1000),
    "normal_": lambda T: T.empty(50).normal_(2.0, 3.0),
    "normal_float64": lambda T: T.empty(50, dtype=T.float64).normal_(2.0, 3.0),
    "normal_transposed": lambda T: T.empty(6, 5).t().normal_(1.0, 2.0),
    "normal_tensors": lambda T: T.normal(T.arange(20.0), T.ones(20) * 0.5),
    "normal_floats": lambda T: T.normal(1.0, 2.0, size=(30,)),
    "uniform_": lambda T: T.empty(1000).uniform_(-0.3, 0.7),
    "uniform_float64": lambda T: T.empty(100, dtype=T.float64).uniform_(-3, 7),
    "bernoulli_p": lambda T: T.empty(100).bernoulli_(0.3),
    "bernoulli_tensor": lambda T: T.bernoulli(T.full((50,), 0.4)),
    "bernoulli_tensor_float64": lambda T: T.bernoulli(T.full((50,), 0.4, dtype=T.float64)),
    "exponential_": lambda T: T.empty(50).exponential_(2.0),
    "geometric_": lambda T: T.empty(50).geometric_(0.3),
    "log_normal_": lambda T: T.empty(50).log_normal_(),
    "cauchy_": lambda T: T.empty(50).cauchy_(),
    "random_int64": lambda T: T.empty(20, dtype=T.int64).random_(),
    "random_float": lambda T: T.empty(20).random_(),
    "random_from_to": lambda T: T.empty(20).random_(3, 9),
    "multinomial_one": lambda T: T.multinomial(T.tensor([[.1, .2, .7], [.5, .25, .25]]), 1),
    "multinomial_without": lambda T: T.multinomial(T.tensor([.1, .2, .3, .4]), 3),
    "multinomial_with": lambda T: T.multinomial(T.tensor([[.1, .2, .3, .4], [1., 1., 1., 5.]]),
                                                10, replacement=True),
    "dropout": lambda T: T.nn.functional.dropout(T.ones(100), 0.3),
    "linear_init": lambda T: T.cat([T.nn.Linear(20, 30).weight.detach().flatten(),
                                    T.nn.Linear(5, 3).bias.detach()]),
    "conv_init": lambda T: T.nn.Conv2d(3, 8, 3).weight.detach(),
    "embedding_init": lambda T: T.nn.Embedding(10, 4).weight.detach(),
    "xavier_normal_": lambda T: T.nn.init.xavier_normal_(T.empty(10, 20)),
    "xavier_uniform_": lambda T: T.nn.init.xavier_uniform_(T.empty(10, 20)),
    "kaiming_normal_": lambda T: T.nn.init.kaiming_normal_(T.empty(10, 20)),
    "trunc_normal_": lambda T: T.nn.init.trunc_normal_(T.empty(10, 20)),
    "trunc_normal_narrow": lambda T: T.nn.init.trunc_normal_(T.empty(50), a=-0.2, b=0.1),
    "generator": lambda T: T.rand(5, generator=_gen(T)),
    "rng_state_replay": lambda T: (lambda s: (T.rand(3), T.set_rng_state(s), T.rand(3))[2])(
        T.get_rng_state()),
}


def as_array(t):
    """A tensor's values as numpy (bfloat16 widened: numpy has no bfloat16 of its own)."""
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.ascontiguousarray(t.numpy())


def fingerprint(arr):
    return {"dtype": str(arr.dtype), "shape": list(arr.shape),
            "sha256": hashlib.sha256(arr.tobytes()).hexdigest(),
            "head": arr.ravel()[:4].tolist()}


def run(T, name, seed):
    T.manual_seed(seed)
    return as_array(CASES[name](T))


def record():
    import torch
    data = {name: {str(s): fingerprint(run(torch, name, s)) for s in SEEDS} for name in CASES}
    RECORDED.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    record()
