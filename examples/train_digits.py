"""Train a small CNN on scikit-learn's 8x8 handwritten digits (no download).

    python examples/train_digits.py                  # the CPU backend
    python examples/train_digits.py --device opencl  # the same script on another backend

A plain PyTorch training loop: only the import line says dispatchtorch. It saves a
checkpoint, loads it into a fresh model and checks that the accuracy is unchanged.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

# One BLAS thread unless the caller says otherwise: the CPU backend's matrix products
# are small here, and on a machine whose few cores are shared, OpenBLAS's spinning
# worker threads made them up to 10x slower (measured on the 2-core CI box). Set
# before numpy loads; OPENBLAS_NUM_THREADS=2 (etc.) in the environment overrides it.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import dispatchtorch as torch
import dispatchtorch.nn as nn
from dispatchtorch.utils.data import DataLoader, TensorDataset

# the repository's checkpoints/ folder (ignored by git)
CHECKPOINTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                           "checkpoints"))


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                                   # 32 x 4 x 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Dropout(0.2),
        nn.Linear(64, 10),
    )


def load_data(device, seed):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]           # (N, 1, 8, 8) in [0, 1]
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    as_t = lambda a: torch.from_numpy(a).to(device)                    # noqa: E731
    return as_t(x_tr), as_t(y_tr), as_t(x_te), as_t(y_te)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    return (pred == y).float().mean().item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="cpu, opencl, cuda, ... (default cpu)")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true", help="train through torch.compile(model)")
    p.add_argument("--checkpoint", default=os.path.join(CHECKPOINTS, "digits_cnn.pt"))
    args = p.parse_args(argv)

    start = time.perf_counter()
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    x_tr, y_tr, x_te, y_te = load_data(device, args.seed)
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))

    model = make_model().to(device)
    if args.compile:
        model = torch.compile(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr,
                                                    total_steps=args.epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    print(f"training on {device} ({len(x_tr)} train / {len(x_te)} test images)")
    bar = tqdm(total=args.epochs * len(loader), unit="step", file=sys.stdout,
               bar_format="{l_bar}{bar:20}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]")
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}", refresh=False)
            bar.update()
    bar.close()

    acc = accuracy(model, x_te, y_te)
    train_time = time.perf_counter() - start
    os.makedirs(os.path.dirname(os.path.abspath(args.checkpoint)), exist_ok=True)
    # a compiled model's state_dict keys carry "_orig_mod." (as PyTorch's): save the original's
    torch.save({"model": getattr(model, "_orig_mod", model).state_dict(),
                "optimizer": optimizer.state_dict(),
                "epochs": args.epochs, "test_accuracy": acc}, args.checkpoint)

    restored = make_model().to(device)
    checkpoint = torch.load(args.checkpoint, map_location=device)
    restored.load_state_dict(checkpoint["model"])
    acc_restored = accuracy(restored, x_te, y_te)
    print(f"test accuracy {acc:.2%} after {args.epochs} epochs in {train_time:.1f} s")
    print(f"checkpoint {args.checkpoint}: reloaded model's test accuracy {acc_restored:.2%}")
    if acc_restored != acc:
        raise SystemExit("the reloaded model's accuracy differs from the trained model's")
    return acc


if __name__ == "__main__":
    main()
