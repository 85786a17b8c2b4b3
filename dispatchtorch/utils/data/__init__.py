"""dispatchtorch.utils.data: datasets, samplers and the DataLoader, as in PyTorch."""
from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader, _DatasetKind
from .datapipes import (DFIterDataPipe, DataChunk, IterDataPipe, MapDataPipe,
                        argument_validation, functional_datapipe,
                        guaranteed_datapipes_determinism, non_deterministic,
                        runtime_validation, runtime_validation_disabled)
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .distributed import DistributedSampler  # torch.utils.data.DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "DistributedSampler",
           "_DatasetKind", "default_collate", "default_convert", "get_worker_info",
           "random_split", "DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe",
           "argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]
