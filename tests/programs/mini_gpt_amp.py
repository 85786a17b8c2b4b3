"""A tiny GPT trained with mixed precision (bfloat16 autocast on CPU) and GradScaler.

The model is nanoGPT's model.py (https://github.com/karpathy/nanoGPT), MIT License,
Copyright (c) 2022 Andrej Karpathy; the training step is nanoGPT's train.py loop
(autocast context, GradScaler, unscale_ + clip_grad_norm_, AdamW with decay / no-decay
groups from configure_optimizers); the sampler is minGPT's trainer's
(https://github.com/karpathy/minGPT, MIT License, Copyright (c) 2020 Andrej Karpathy).
Full license text in LICENSE-nanogpt beside this file. Changes: the body is a function
of the `torch` module it runs with, the attention is the manual (non-flash) path, sizes
are tiny, data are synthetic, and it returns its losses.
"""
import math
from dataclasses import dataclass


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 32
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


def build(torch, config):
    nn = torch.nn
    F = torch.nn.functional

    class LayerNorm(nn.Module):
        """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):

        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            y = self.resid_dropout(self.c_proj(y))
            return y

    class MLP(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    class GPT(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {'params': decay_params, 'weight_decay': weight_decay},
                {'params': nodecay_params, 'weight_decay': 0.0}
            ]
            use_fused = device_type == 'cuda'
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, fused=use_fused)

    return GPT(config)


class CopyTask:
    """Synthetic sequences: a random prefix repeated (learnable: the second half copies
    the first). A map-style dataset, as minGPT's."""

    def __init__(self, torch, n, block_size, vocab_size, seed=0):
        import numpy as np
        rng = np.random.default_rng(seed)
        half = (block_size + 1) // 2 + 1
        prefix = rng.integers(0, vocab_size, size=(n, half))
        self.data = np.concatenate([prefix, prefix], axis=1)[:, :block_size + 1]
        self.torch = torch

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        chunk = self.torch.tensor(self.data[i], dtype=self.torch.long)
        return chunk[:-1], chunk[1:]


def train(torch, model, dataset, sampler, steps=6, batch_size=8, lr=3e-3):
    """nanoGPT's training step with minGPT's DataLoader; returns the losses."""
    device_type = 'cpu'
    ptdtype = torch.bfloat16
    # nanoGPT: `nullcontext() if device_type == 'cpu' else torch.amp.autocast(...)`; here
    # autocast runs on the CPU too (bfloat16), which is what this program checks
    ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    scaler = torch.amp.GradScaler(device_type, enabled=True, init_scale=2.0 ** 10)
    optimizer = model.configure_optimizers(0.1, lr, (0.9, 0.95), device_type)
    train_loader = torch.utils.data.DataLoader(dataset, sampler=sampler, shuffle=False,
                                               pin_memory=False, batch_size=batch_size,
                                               num_workers=0)
    data_iter = iter(train_loader)
    losses = []
    for it in range(steps):
        X, Y = next(data_iter)
        with ctx:
            logits, loss = model(X, Y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses
