"""What runs without an MPI job: the MPI engine gets a contiguous CPU tensor's own memory
(zero-copy) and a copy plus write-back otherwise; ReduceOp and the console script."""
from __future__ import annotations

import importlib
import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch.distributed.collectives import _stage

HOST = SimpleNamespace(buffers="host")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_contiguous_cpu_tensor_is_handed_over_without_a_copy():
    t = torch.arange(6.).reshape(2, 3)
    arr, back = _stage(HOST, t)
    assert back is None and np.shares_memory(arr, t.numpy())
    arr[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    arr, back = _stage(HOST, t[1])               # a contiguous view with an offset
    assert back is None and np.shares_memory(arr, t.numpy())


def test_a_strided_view_is_staged_and_written_back():
    t = torch.arange(6.).reshape(2, 3)
    v = t.t()
    arr, back = _stage(HOST, v)
    assert not np.shares_memory(arr, t.numpy()) and arr.flags.c_contiguous
    np.testing.assert_array_equal(arr, np.arange(6.).reshape(2, 3).T)
    arr *= 10
    back()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.).reshape(2, 3) * 10)


def test_requires_grad_tensor_is_staged_through_detach():
    w = torch.ones(3, requires_grad=True)
    arr, back = _stage(HOST, w)
    assert back is None and arr.tolist() == [1.0, 1.0, 1.0]


def test_reduce_op_names_and_bad_ops():
    assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
    assert [o.name for o in dist.ReduceOp.RedOpType] == \
        ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    from dispatchtorch.distributed.reduce_op import check
    assert check(dist.ReduceOp.MAX, "x") == "max"
    assert check(dist.ReduceOp(dist.ReduceOp.AVG), "x") == "avg"
    with pytest.raises(TypeError, match="all_reduce: op must be a torch.distributed.ReduceOp"):
        check("sum", "all_reduce")


def test_console_script_and_torch_attributes():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    target = meta["project"]["scripts"]["dispatchtorch-run"]
    mod, fn = target.split(":")
    assert mod == "dispatchtorch.distributed.run"
    assert callable(getattr(importlib.import_module(mod), fn))
    assert meta["project"]["optional-dependencies"]["distributed"][0].startswith("mpi4py")
    assert torch.distributed is dist
    assert torch.nn.parallel.DistributedDataParallel.__name__ == "DistributedDataParallel"
    assert torch.utils.data.DistributedSampler.__module__ == "dispatchtorch.utils.data.distributed"
    assert sys.modules["dispatchtorch.distributed"] is dist


def test_queue_callback_runs_once_after_the_backward_pass():
    from dispatchtorch.autograd.engine import queue_callback
    with pytest.raises(RuntimeError, match="only be installed during backward pass"):
        queue_callback(lambda: None)
    a = torch.ones(2, requires_grad=True)
    b = torch.full((2,), 3.0, requires_grad=True)
    seen = []

    def hook(g):
        queue_callback(lambda: seen.append((a.grad.tolist(), b.grad.tolist())))
    a.register_hook(hook)
    (a * b).sum().backward()
    # queued from a's hook, it ran after every gradient was accumulated, exactly once
    assert seen == [([3.0, 3.0], [1.0, 1.0])]
    (a * b).sum().backward()
    assert len(seen) == 2 and seen[1] == ([6.0, 6.0], [2.0, 2.0])
