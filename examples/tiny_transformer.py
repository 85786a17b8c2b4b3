"""A character-level transformer trained on Shakespeare's sonnets (public domain,
examples/data/sonnets.txt), then asked to write a few lines.

    python examples/tiny_transformer.py                 # a short run on the CPU backend
    python examples/tiny_transformer.py --steps 2000     # longer, better text
    python examples/tiny_transformer.py --device opencl

A causal nn.TransformerEncoder (pre-norm) over learned token and position
embeddings. The loss starts at ln(vocabulary) and must end well below the
unigram entropy of the text: the model has learned more than letter frequencies.
"""
from __future__ import annotations

import argparse
import math
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
from tqdm import tqdm

import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sonnets.txt")


class CharTransformer(nn.Module):
    def __init__(self, vocab, context, d_model=64, heads=4, layers=2, dropout=0.1):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                            enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("mask", nn.generate_square_subsequent_mask(context),
                             persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        mask = self.mask[:t, :t]
        return self.head(self.blocks(x, mask=mask, is_causal=True))


def unigram_entropy(ids, vocab):
    """Entropy (nats) of the character frequencies: the best loss without context."""
    p = np.bincount(ids, minlength=vocab) / len(ids)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def batches(data, context, batch_size, gen):
    """Random windows of the text: inputs and the same windows shifted by one."""
    while True:
        starts = gen.integers(0, len(data) - context - 1, batch_size)
        x = np.stack([data[s:s + context] for s in starts])
        y = np.stack([data[s + 1:s + context + 1] for s in starts])
        yield x, y


@torch.no_grad()
def evaluate(model, data, context, device):
    model.eval()
    n = (len(data) - 1) // context
    x = torch.tensor(data[:n * context].reshape(n, context), device=device)
    y = torch.tensor(data[1:n * context + 1].reshape(n, context), device=device)
    loss = F.cross_entropy(model(x).reshape(-1, model.head.out_features), y.reshape(-1))
    model.train()
    return loss.item()


@torch.no_grad()
def generate(model, prompt_ids, length, device, temperature, gen):
    model.eval()
    ids = list(prompt_ids)
    for _ in range(length):
        x = torch.tensor([ids[-model.context:]], device=device)
        logits = model(x)[0, -1] / temperature
        p = F.softmax(logits, dim=-1).cpu().numpy().astype(np.float64)
        ids.append(int(gen.choice(len(p), p=p / p.sum())))
    return ids


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--context", type=int, default=48)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--sample-length", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true", help="train through torch.compile(model)")
    p.add_argument("--max-loss-ratio", type=float, default=0.8,
                   help="fail unless the final loss is below this fraction of the unigram entropy")
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    gen = np.random.default_rng(args.seed)
    device = torch.device(args.device)
    text = open(TEXT, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    split = int(0.9 * len(data))
    train, held_out = data[:split], data[split:]
    entropy = unigram_entropy(train, len(chars))
    print(f"{len(text)} characters, vocabulary {len(chars)}: ln(vocab) = "
          f"{math.log(len(chars)):.3f} nats, unigram entropy {entropy:.3f} nats")

    model = CharTransformer(len(chars), args.context).to(device)
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps,
                                                pct_start=0.1)
    start = time.perf_counter()
    stream = batches(train, args.context, args.batch_size, gen)
    recent = []
    bar = tqdm(range(args.steps), unit="step", file=sys.stdout)
    for _ in bar:
        xb, yb = next(stream)
        x, y = torch.tensor(xb, device=device), torch.tensor(yb, device=device)
        loss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        recent = (recent + [loss.item()])[-20:]
        bar.set_postfix(loss=f"{sum(recent) / len(recent):.3f}", refresh=False)
    bar.close()
    train_loss = evaluate(model, train, args.context, device)
    held_loss = evaluate(model, held_out, args.context, device)
    print(f"{args.steps} steps in {time.perf_counter() - start:.1f} s: loss on the training "
          f"text {train_loss:.3f} nats, on the held-out 10% {held_loss:.3f} "
          f"(unigram entropy {entropy:.3f})")
    prompt = "Shall I compare thee"
    out = generate(model, [stoi[c] for c in prompt], args.sample_length, device,
                   args.temperature, gen)
    print("---\n" + "".join(chars[i] for i in out) + "\n---")
    if train_loss > args.max_loss_ratio * entropy:
        raise SystemExit(f"the loss {train_loss:.3f} did not fall well below the unigram "
                         f"entropy {entropy:.3f}")
    return train_loss, entropy


if __name__ == "__main__":
    main()
