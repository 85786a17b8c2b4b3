"""Sparse COO / CSR tensors of PyTorch files (torch._utils._rebuild_sparse_tensor),
rebuilt with their invariants checked (PyTorch checks them after the load), so a forged
index cannot point outside the tensor."""
from __future__ import annotations

import pickle

from .._tensor import Tensor

LAYOUTS = ("torch.sparse_coo", "torch.sparse_csr")


def _get_layout(name):
    """torch.serialization._get_layout: the layout's name, for the layouts read here."""
    if name not in LAYOUTS:
        raise pickle.UnpicklingError(f"sparse layout {name!r} is not supported here (only "
                                     f"{', '.join(LAYOUTS)})")
    return name


def _rebuild_sparse_tensor(layout, data):
    if layout not in LAYOUTS or not isinstance(data, tuple) or not all(
            isinstance(t, Tensor) for t in data[:-2 if layout == LAYOUTS[0] else -1]):
        raise pickle.UnpicklingError(f"malformed sparse tensor of layout {layout!r}")
    if any(t.device.type == "meta" for t in data if isinstance(t, Tensor)):
        raise RuntimeError("torch.load: sparse tensors load from the zip format only (not the "
                           "legacy one), and not onto the meta device")
    if layout == "torch.sparse_coo":
        from ..sparse import _build
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) > 3 else None
        t = _build.sparse_coo_tensor(indices, values, tuple(size), check_invariants=True)
        # the saved coalesced flag, as dispatchtorch's own checkpoints keep it
        return _build.rebuild_coo(t._indices(), values, tuple(size), bool(coalesced))
    from ..sparse import _csr
    crow, col, values, size = data
    return _csr.sparse_csr_tensor(crow, col, values, tuple(size), check_invariants=True)
