"""The seed every DataLoader iterator draws when it starts, as PyTorch's
_BaseDataLoaderIter does (single-process loaders too): one int64 `random_()` from the
loader's generator or the global stream. Workers are seeded with it plus their id; the
draw also moves the global stream, so dropout and init after a `for batch in loader`
see PyTorch's numbers."""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops


def draw_base_seed(loader):
    return int(_ops.empty((), dtype=D.int64).random_(generator=loader.generator).item())
