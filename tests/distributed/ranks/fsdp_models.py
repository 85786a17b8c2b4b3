"""The small transformer-like model of the FSDP tests, built from either library (the
single-rank tests compare against PyTorch's FSDP on the same model)."""
from __future__ import annotations


def tiny_classes(lib):
    """(Tiny, Block) classes of `lib` (dispatchtorch or torch)."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(6)
            self.mix = nn.Linear(6, 6)
            self.mlp = nn.Sequential(nn.Linear(6, 10), nn.GELU(), nn.Linear(10, 6))
            self.register_buffer("scale", lib.ones(6))

        def forward(self, x):
            x = x + self.mix(self.norm(x)) * self.scale
            return x + self.mlp(x)

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(4, 6)
            self.layers = nn.ModuleList([Block(), Block()])
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            x = self.inp(x)
            for b in self.layers:
                x = b(x)
            return self.head(x)
    return Tiny, Block
