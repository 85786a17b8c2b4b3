"""The benchmark's models and training step, written once against a torch-like module.

Every function takes `tl`, the framework's module (`torch` or `dispatchtorch`), and
uses only PyTorch's public API, so both libraries run exactly the same code.
"""
from __future__ import annotations

# What each model needs from the module; a case whose module lacks one is skipped
# with the missing name as its reason.
MLP_NEEDS = ("nn.Module", "nn.Sequential", "nn.Linear", "nn.ReLU", "nn.functional.cross_entropy",
             "optim.SGD")
CNN_NEEDS = ("nn.Module", "nn.Sequential", "nn.Conv2d", "nn.ReLU", "nn.MaxPool2d", "nn.Flatten",
             "nn.Linear", "nn.Dropout", "nn.functional.cross_entropy", "optim.Adam")
TRANSFORMER_NEEDS = ("nn.Module", "nn.Embedding", "nn.TransformerEncoderLayer",
                     "nn.TransformerEncoder", "nn.LayerNorm", "nn.Linear",
                     "nn.functional.cross_entropy", "optim.AdamW", "arange")


def mlp(tl, in_features=512, width=512, classes=10):
    """Three Linear layers of width 512 (issue 7's MLP)."""
    nn = tl.nn
    return nn.Sequential(nn.Linear(in_features, width), nn.ReLU(),
                         nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, classes))


def digits_cnn(tl, classes=10):
    """The convolutional network of examples/train_digits.py (1x8x8 scikit-learn digits)."""
    nn = tl.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                                   # 32 x 4 x 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Dropout(0.2),
        nn.Linear(64, classes))


def tiny_transformer(tl, vocab=65, d_model=64, nhead=4, layers=2, block=64, dropout=0.1):
    """The character-level model of examples/tiny_transformer.py: token and position
    embeddings, a pre-norm GELU TransformerEncoder with a causal mask and a final
    LayerNorm, a linear head over the vocabulary."""
    nn = tl.nn

    class TinyTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d_model)
            self.pos = nn.Embedding(block, d_model)
            layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                                 enable_nested_tensor=False)
            self.head = nn.Linear(d_model, vocab)

        def forward(self, idx):
            steps = idx.shape[1]
            pos = tl.arange(steps, device=idx.device)
            h = self.tok(idx) + self.pos(pos)
            causal = pos[None, :] > pos[:, None]           # True: may not attend
            return self.head(self.encoder(h, mask=causal, is_causal=True))

    return TinyTransformer()


def training_step(tl, model, optimizer, x, y):
    """A step function: forward, cross-entropy, backward, update; returns the loss."""
    cross_entropy = tl.nn.functional.cross_entropy

    def step():
        optimizer.zero_grad()
        out = model(x)
        loss = cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        optimizer.step()
        return loss
    return step
