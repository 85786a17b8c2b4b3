"""torch.distributed's exceptions, DebugLevel, default_pg_timeout and the small queries
(get_node_local_rank, is_backend_available, get_default_backend_for_device, get_pg_count)
against PyTorch's own answers, without an MPI job."""
from __future__ import annotations

import pytest

import dispatchtorch.distributed as dist

tdist = pytest.importorskip("torch.distributed")

ERRORS = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError",
          "QueueEmptyError"]


@pytest.mark.parametrize("name", ERRORS)
def test_exception_hierarchy_as_pytorch(name):
    ours, theirs = getattr(dist, name), getattr(tdist, name)
    assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]


def test_store_error_is_caught_as_runtime_error():
    with pytest.raises(RuntimeError):
        raise dist.QueueEmptyError("empty")


def test_default_pg_timeout():
    assert dist.default_pg_timeout == tdist.default_pg_timeout


def test_debug_level(monkeypatch):
    assert [m.name for m in dist.DebugLevel] == list(tdist.DebugLevel.__members__)
    assert [m.value for m in dist.DebugLevel] == [int(m) for m in
                                                  tdist.DebugLevel.__members__.values()]
    assert (dist.DebugLevel.INFO == 1) is (tdist.DebugLevel.INFO == 1)
    old = dist.get_debug_level()
    try:
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        assert dist.get_debug_level() is dist.DebugLevel.DETAIL
        with pytest.raises(TypeError, match="incompatible function arguments"):
            dist.set_debug_level(5)
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "info")
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() is dist.DebugLevel.INFO
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "bogus")
        with pytest.raises(ValueError) as ours:
            dist.set_debug_level_from_env()
        with pytest.raises(ValueError) as theirs:
            tdist.set_debug_level_from_env()
        assert str(ours.value) == str(theirs.value)
    finally:
        dist.set_debug_level(old)
        monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG")
        tdist.set_debug_level_from_env()


def test_get_node_local_rank(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(RuntimeError) as ours:
        dist.get_node_local_rank()
    with pytest.raises(RuntimeError) as theirs:
        tdist.get_node_local_rank()
    assert str(ours.value) == str(theirs.value)
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert dist.get_node_local_rank(fallback_rank=5) == 2 == tdist.get_node_local_rank(5)


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1"])
def test_default_backend_for_device(device):
    assert dist.get_default_backend_for_device(device) == \
        tdist.get_default_backend_for_device(device)


def test_default_backend_for_unregistered_device():
    with pytest.raises(ValueError) as ours:
        dist.get_default_backend_for_device("meta")
    with pytest.raises(ValueError) as theirs:
        tdist.get_default_backend_for_device("meta")
    assert str(ours.value) == str(theirs.value)


def test_is_backend_available():
    assert dist.is_backend_available("gloo") is dist.is_available()
    assert dist.is_backend_available("GLOO") is dist.is_available()
    assert dist.is_backend_available("mpi") is dist.is_available()
    assert dist.is_backend_available("nccl") is dist.is_nccl_available()
    assert dist.is_backend_available("ucc") is False is tdist.is_backend_available("ucc")
    assert dist.is_backend_available("xyz") is False is tdist.is_backend_available("xyz")
    assert dist.is_backend_available("cpu:gloo,cuda:nccl") is (
        dist.is_available() and dist.is_nccl_available())


def test_pg_count_without_a_group():
    assert dist.get_pg_count() == 0 == tdist.get_pg_count()
