"""DeviceMesh / init_device_mesh on every rank: shapes (n,), (1, n) and (n, 1), the groups
of each dimension checked by an all_reduce of the ranks against the sum each rank works
out by hand, slicing by name, coordinates and local ranks; PyTorch's errors."""
from __future__ import annotations

import pytest

import dispatchtorch as torch
import dispatchtorch.distributed as dist
from dispatchtorch.distributed.device_mesh import DeviceMesh, init_device_mesh


def _sum_in(g):
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t, group=g)
    return t.item()


def test_one_dim_mesh(world):
    r, n = world
    m = init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    assert m.mesh.tolist() == list(range(n)) and m.mesh.dtype == torch.int32
    assert (m.ndim, m.shape, m.size(), m.mesh_dim_names) == (1, (n,), n, ("dp",))
    assert m.get_coordinate() == (r,) and m.get_local_rank() == r == m.get_local_rank("dp")
    assert dist.get_process_group_ranks(m.get_group()) == list(range(n))
    assert _sum_in(m.get_group("dp")) == n * (n - 1) / 2
    assert m["dp"] is m
    assert repr(m) == f"DeviceMesh((dp={n}), 'cpu', stride=(1,))"


def test_one_by_n_mesh(world):
    r, n = world
    m = init_device_mesh("cpu", (1, n), mesh_dim_names=("dp", "tp"))
    assert m.mesh.tolist() == [list(range(n))] and m.get_coordinate() == (0, r)
    assert dist.get_process_group_ranks(m.get_group("dp")) == [r]       # one rank per dp row
    assert dist.get_process_group_ranks(m.get_group(1)) == list(range(n))
    assert m.get_local_rank("dp") == 0 and m.get_local_rank("tp") == r
    assert _sum_in(m.get_group("dp")) == r and _sum_in(m.get_group("tp")) == n * (n - 1) / 2
    tp = m["tp"]
    assert tp.mesh.tolist() == list(range(n)) and tp.mesh_dim_names == ("tp",)
    assert tp.get_local_rank() == r and tp.get_group() is m.get_group("tp")
    dp = m["dp"]
    assert dp.mesh.tolist() == [r] and dp.get_coordinate() == (0,)
    assert repr(m) == f"DeviceMesh((dp=1, tp={n}), 'cpu', stride=((), 1))"


def test_n_by_one_mesh(world):
    r, n = world
    m = init_device_mesh("cpu", (n, 1), mesh_dim_names=("pp", "dp"))
    assert m.mesh.tolist() == [[i] for i in range(n)] and m.get_coordinate() == (r, 0)
    assert m.size(0) == n and m.size(1) == 1 and m.size() == n
    assert dist.get_process_group_ranks(m.get_group("pp")) == list(range(n))
    assert dist.get_process_group_ranks(m.get_group("dp")) == [r]
    assert m["pp"].mesh.tolist() == list(range(n)) and m["dp"].mesh.tolist() == [r]
    assert m[("pp", "dp")] is m
    assert len(m.get_all_groups()) == 2


def test_mesh_of_some_ranks(world):
    """A mesh smaller than the world: ranks outside it have no coordinate."""
    r, n = world
    m = DeviceMesh("cpu", [0, 1])
    assert m.get_coordinate() == ((r,) if r < 2 else None)
    if r < 2:
        assert _sum_in(m.get_group()) == 1.0
    else:
        assert m.get_group() is dist.GroupMember.NON_GROUP_MEMBER


def test_device_mesh_errors(world):
    r, n = world
    with pytest.raises(RuntimeError, match=rf"Mesh should not be bigger than default world size "
                                           rf"{n}, but found {n + 1} ranks!"):
        init_device_mesh("cpu", (n + 1,))
    with pytest.raises(RuntimeError, match="mesh_shape and mesh_dim_names should have same "
                                           "length! Found len\\(mesh_dim_names\\): 2 and "
                                           "len\\(mesh_shape\\):1."):
        init_device_mesh("cpu", (n,), mesh_dim_names=("a", "b"))
    with pytest.raises(RuntimeError, match="Each mesh_dim_name must be unique"):
        init_device_mesh("cpu", (1, n), mesh_dim_names=("a", "a"))
    with pytest.raises(RuntimeError, match="Device type with index is not supported but got "
                                           "cpu:0"):
        init_device_mesh("cpu:0", (n,))
    m = init_device_mesh("cpu", (1, n), mesh_dim_names=("dp", "tp"))
    with pytest.raises(RuntimeError, match="Optional kwarg `mesh_dim` needs to be specified"):
        m.get_group()
    with pytest.raises(RuntimeError, match="Optional kwarg `mesh_dim` needs to be specified"):
        m.get_local_rank()
    with pytest.raises(KeyError, match="Invalid mesh_dim_names \\('xx',\\) specified"):
        m["xx"]
    with pytest.raises(KeyError, match="Mesh dimension 'zz' does not exist."):
        m.get_group("zz")
    with pytest.raises(KeyError, match="Mesh dim indices should be in ascending order."):
        m[("tp", "dp")]
    with pytest.raises(RuntimeError, match="Cannot slice a DeviceMesh without mesh_dim_names!"):
        init_device_mesh("cpu", (n,))["a"]
