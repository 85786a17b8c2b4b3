"""dispatchtorch.utils.data: datasets, samplers and the DataLoader, as in PyTorch."""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .distributed import DistributedSampler  # noqa: F401  (torch.utils.data.DistributedSampler)
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler)

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "default_collate", "default_convert", "random_split"]
