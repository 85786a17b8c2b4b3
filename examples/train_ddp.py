"""Train the digits CNN of train_digits.py data-parallel on N ranks (no download).

    dispatchtorch-run --nproc-per-node=2 examples/train_ddp.py
    python -m dispatchtorch.distributed.run --nproc-per-node=3 examples/train_ddp.py --epochs 5
    mpiexec -n 2 python examples/train_ddp.py            # a plain MPI launch works too
    dispatchtorch-run --nproc-per-node=2 examples/train_ddp.py --fsdp   # sharded instead

A plain PyTorch DDP script: each rank trains on its DistributedSampler share of the
training set with a per-rank batch of --batch-size; DistributedDataParallel averages the
gradients, so every rank holds the same model. Rank 0 evaluates and saves it. With
--fsdp, FullyShardedDataParallel shards the parameters over the ranks instead, and rank 0
gets the full state dict to evaluate and save.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # see train_digits.py
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dispatchtorch as torch  # noqa: E402
import dispatchtorch.distributed as dist  # noqa: E402
import dispatchtorch.nn as nn  # noqa: E402
from dispatchtorch.distributed.fsdp import FullStateDictConfig, StateDictType  # noqa: E402
from dispatchtorch.distributed.fsdp import FullyShardedDataParallel as FSDP  # noqa: E402
from dispatchtorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from dispatchtorch.utils.data import DataLoader, TensorDataset  # noqa: E402
from dispatchtorch.utils.data.distributed import DistributedSampler  # noqa: E402
from train_digits import accuracy, load_data, make_model  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="cpu, opencl, cuda (cuda: cuda:LOCAL_RANK)")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fsdp", action="store_true", help="FullyShardedDataParallel, not DDP")
    p.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(),
                                                        "dispatchtorch_digits_ddp.pt"))
    args = p.parse_args(argv)

    dist.init_process_group()              # rank and world size come from the launcher
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(args.device)
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    x_tr, y_tr, x_te, y_te = load_data(device, args.seed)
    train = TensorDataset(x_tr, y_tr)
    sampler = DistributedSampler(train, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    model = (FSDP if args.fsdp else DDP)(make_model().to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    if rank == 0:
        print(f"training on {world} ranks ({device}), {len(x_tr)} train images, "
              f"{len(sampler)} per rank, global batch {world * args.batch_size}", flush=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, device=device)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += torch.stack([loss.detach() * len(yb), torch.tensor(float(len(yb)),
                                                                        device=device)])
        dist.all_reduce(total)
        if rank == 0:
            print(f"epoch {epoch + 1}: mean train loss {(total[0] / total[1]).item():.4f}",
                  flush=True)

    acc, plain = None, model.module
    if args.fsdp:                          # the full parameters, on rank 0 only (collective)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                                  FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
            state = model.state_dict()
        plain = make_model().to(device)
        if rank == 0:
            plain.load_state_dict(state)
    if rank == 0:
        acc = accuracy(plain, x_te, y_te)
        torch.save(plain.state_dict(), args.checkpoint)
        print(f"test accuracy {acc:.2%} after {args.epochs} epochs in "
              f"{time.perf_counter() - start:.1f} s; saved {args.checkpoint}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
