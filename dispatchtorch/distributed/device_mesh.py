"""DeviceMesh / init_device_mesh: ranks laid out as an n-d array, one process group per
row of each dimension (made with new_group by every rank, in the same order), as
torch.distributed.device_mesh's. Slicing by dimension names reuses those groups."""
from __future__ import annotations

import numpy as np

from .. import ops as _ops
from .group import GroupMember, get_rank, get_world_size, is_initialized, init_process_group, new_group


def _dim_groups(mesh):
    """For each dim, the group (of new_group) of the row along it that holds this rank
    (NON_GROUP_MEMBER on a rank outside the mesh)."""
    me, groups = get_rank(), []
    for d in range(mesh.ndim):
        rows = np.moveaxis(mesh, d, -1).reshape(-1, mesh.shape[d])
        mine = None
        for row in rows:
            g = new_group([int(x) for x in row], sort_ranks=False)
            if me in row:
                mine = g
        groups.append(GroupMember.NON_GROUP_MEMBER if mine is None else mine)
    return groups


class DeviceMesh:
    """A device_type mesh of global ranks (`mesh`: an array-like or tensor of them)."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True,
                 _groups=None):
        arr = np.array(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        self._arr = arr
        self.device_type = device_type
        self._names = None if mesh_dim_names is None else tuple(mesh_dim_names)
        if not is_initialized():
            init_process_group()
        world = get_world_size()
        if arr.size > world:
            raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but "
                               f"found {arr.size} ranks!")
        self._groups = _groups if _groups is not None else _dim_groups(arr)
        hit = np.argwhere(arr == get_rank())
        self._coordinate = tuple(int(i) for i in hit[0]) if len(hit) else None

    @property
    def mesh(self):
        return _ops.from_numpy(self._arr.astype(np.int32))

    @property
    def mesh_dim_names(self):
        return self._names

    @property
    def ndim(self):
        return self._arr.ndim

    @property
    def shape(self):
        return tuple(self._arr.shape)

    def size(self, mesh_dim=None):
        return int(self._arr.size if mesh_dim is None else self._arr.shape[mesh_dim])

    def get_rank(self):
        return get_rank()

    def get_coordinate(self):
        """This rank's index along every dim, or None outside the mesh."""
        return self._coordinate

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self._names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self._names}")
            return self._names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """The group of this rank's row along mesh_dim (optional on a 1-d mesh)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.",
                               "If you want to get the list of all the ProcessGroups in the "
                               "DeviceMesh,please use `get_all_groups()` instead.")
        return self._groups[self._dim(0 if mesh_dim is None else mesh_dim)]

    def get_all_groups(self):
        return list(self._groups)

    def get_local_rank(self, mesh_dim=None):
        """This rank's rank in its group along mesh_dim."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.")
        return get_rank(self.get_group(0 if mesh_dim is None else mesh_dim))

    def __getitem__(self, mesh_dim_names):
        """The sub-mesh of the named dims through this rank (their groups reused)."""
        if not self._names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._names:
            return self
        if not all(n in self._names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self._names)}.")
        dims = [self._names.index(n) for n in names]
        if dims != sorted(dims) or len(set(dims)) != len(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should "
                           f"be in ascending order.")
        coord = self._coordinate or (0,) * self.ndim
        index = tuple(slice(None) if d in dims else coord[d] for d in range(self.ndim))
        return DeviceMesh(self.device_type, self._arr[index], mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def _strides(self):
        out = []
        for d, n in enumerate(self._arr.shape):
            if n == 1:
                out.append(())
            else:
                at = (0,) * self.ndim
                nxt = tuple(1 if i == d else 0 for i in range(self.ndim))
                out.append(int(self._arr[nxt] - self._arr[at]))
        return tuple(out)

    def __repr__(self):
        sizes = (f"({', '.join(f'{k}={v}' for k, v in zip(self._names, self.shape))})"
                 if self._names else f"{self.shape}")
        return f"DeviceMesh({sizes}, '{self.device_type}', stride={self._strides()})"

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self.shape == other.shape
                and np.array_equal(self._arr, other._arr) and self._names == other._names
                and self.device_type == other.device_type)

    def __hash__(self):
        return hash((self.shape, tuple(self._arr.reshape(-1).tolist()), self._names,
                     self.device_type))


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A mesh of ranks 0 .. prod(mesh_shape)-1 in row-major order."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                               f"in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if backend_override is not None:
        raise NotImplementedError("init_device_mesh: backend_override is not supported by the "
                                  "MPI engine (every dimension uses the default group's backend)")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass "
                           "in 'device.type'.")
    shape = tuple(int(s) for s in mesh_shape)
    return DeviceMesh(device_type, np.arange(int(np.prod(shape))).reshape(shape),
                      mesh_dim_names=mesh_dim_names)


DeviceMesh.__module__ = "dispatchtorch.distributed.device_mesh"
