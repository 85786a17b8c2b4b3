"""A stand-in for torchvision's MNIST, ToTensor and Normalize (no download): uint8
"images" drawn from numpy's stable generator, every class present at least twice, the
same bytes for every library. Bound to a library by runner.load(name, lib)."""
import numpy as np

import dispatchtorch as torch


class MNIST:
    def __init__(self, n, seed=0, transform=None):
        rng = np.random.default_rng(seed)
        self.targets = torch.from_numpy(rng.permutation(np.arange(n) % 10).astype(np.int64))
        self.data = torch.from_numpy((rng.random((n, 28, 28)) * 255).astype(np.uint8))
        self.transform = transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        img = self.data[i].numpy()
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.targets[i])


def to_tensor_normalized(img, mean=0.1307, std=0.3081):
    """ToTensor() then Normalize((0.1307,), (0.3081,)), as torchvision computes them."""
    x = torch.from_numpy(np.ascontiguousarray(np.asarray(img, np.float32)[None] / 255.0))
    return (x - torch.tensor([mean]).view(-1, 1, 1)) / torch.tensor([std]).view(-1, 1, 1)
