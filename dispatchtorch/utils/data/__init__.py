"""dispatchtorch.utils.data: datasets, samplers and the DataLoader, as in PyTorch.
DistributedSampler lives in .distributed (the distributed package's part); the
DataPipes, deprecated in PyTorch, are absent (docs/data.md)."""
from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader, _DatasetKind
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "_DatasetKind", "default_collate", "default_convert", "get_worker_info",
           "random_split"]

try:                                    # written by the distributed package's owners
    from .distributed import DistributedSampler  # noqa: F401
    __all__.append("DistributedSampler")
except ImportError:
    pass
