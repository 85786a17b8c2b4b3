"""The models the export tests run, each with an example input (batch first)."""
from __future__ import annotations

import dispatchtorch as torch
import dispatchtorch.nn as nn
from benchmarks import models as bench


def mlp():
    return bench.mlp(torch, in_features=12, width=16, classes=5), torch.randn(3, 12)


def digits_cnn_bn():
    """The digits CNN with a BatchNorm after each convolution (eval: running stats)."""
    m = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 4, 32), nn.ReLU(),
        nn.Dropout(0.2), nn.Linear(32, 10))
    # running statistics that are not the defaults, as after training
    for bn in (m[1], m[4]):
        bn.running_mean.copy_(torch.randn(bn.num_features) * 0.1)
        bn.running_var.copy_(torch.rand(bn.num_features) + 0.5)
    return m, torch.randn(3, 1, 8, 8)


def tiny_transformer():
    return bench.tiny_transformer(torch, vocab=30, d_model=32, nhead=4, layers=2, block=12), \
        torch.randint(0, 30, (3, 12))


class ConvNet(nn.Module):
    """Strided and grouped convolutions, average pooling, SiLU, a global mean."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=4)
        self.pool = nn.AvgPool2d(2)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = nn.functional.silu(self.c1(x))
        x = self.pool(torch.tanh(self.c2(x)))
        return self.head(x.mean(dim=(2, 3)))


def conv_net():
    return ConvNet(), torch.randn(3, 3, 12, 12)


def norm_mlp():
    """LayerNorm, GELU (both forms), residual, Sigmoid."""
    class NormMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 24)
            self.ln = nn.LayerNorm(24)
            self.fc2 = nn.Linear(24, 24)
            self.act = nn.GELU(approximate="tanh")
            self.out = nn.Linear(24, 3)

        def forward(self, x):
            h = nn.functional.gelu(self.ln(self.fc1(x)))
            h = h + self.act(self.fc2(h))
            return torch.sigmoid(self.out(h))
    return NormMLP(), torch.randn(3, 10)


def attention_block():
    """nn.MultiheadAttention, a residual LayerNorm, sliced and transposed views."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
            self.norm = nn.LayerNorm(16)
            self.proj = nn.Linear(16, 6)

        def forward(self, x):
            a, _ = self.attn(x, x, x, need_weights=False)
            h = self.norm(x + a)
            # slices along the sequence, a transpose: strided views in the graph
            return self.proj(h[:, 1:] * h[:, :-1].softmax(-1)).transpose(1, 2)
    return Block(), torch.randn(3, 7, 16)


class Recurrent(nn.Module):
    """A two-layer LSTM then a GRU over a sequence (unrolled in the graph), the last step
    into a head."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, num_layers=2, batch_first=True)
        self.gru = nn.GRU(8, 6, batch_first=True)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        h, _ = self.lstm(x)
        h, _ = self.gru(h)
        return self.head(h[:, -1])


def recurrent():
    return Recurrent(), torch.randn(3, 6, 5)


MODELS = {"mlp": mlp, "digits_cnn_bn": digits_cnn_bn, "tiny_transformer": tiny_transformer,
          "conv_net": conv_net, "norm_mlp": norm_mlp, "attention_block": attention_block,
          "recurrent": recurrent}
