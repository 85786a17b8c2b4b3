"""dispatchtorch.nn.parallel: DistributedDataParallel (one process per rank, over
dispatchtorch.distributed) and a single-process DataParallel."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
