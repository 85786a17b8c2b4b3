"""The forward-forward algorithm, from
https://github.com/pytorch/examples/tree/main/mnist_forward_forward (main.py: Net,
Layer, overlay_y_on_x, get_y_neg). BSD 3-Clause License, Copyright (c) 2017, Pytorch
contributors: see LICENSE-pytorch-examples (the file credits Mohammad Pezeshki's
MIT-licensed original). Changes: synthetic MNIST (synthetic_mnist.py), layers
784-24-24, 6 epochs per layer, a seed; the losses are collected instead of printed."""
import argparse

import dispatchtorch as torch
import dispatchtorch.nn as nn
from dispatchtorch.optim import Adam
from dispatchtorch.utils.data import DataLoader
from runner import load

data = load("synthetic_mnist", torch.__name__)
device = torch.device("cpu")
args = argparse.Namespace(epochs=6, lr=0.03, threshold=2.0, log_interval=1)
LOSSES = []


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(y_samp.item())
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.randint(len(allowed_indices), size=(1,))
        ].item()
    return y_neg.to(device)


def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):

        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=args.lr)
        self.threshold = args.threshold
        self.num_epochs = args.epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(
                torch.exp(
                    torch.cat([-g_pos + self.threshold, g_neg - self.threshold])
                )
            ).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % args.log_interval == 0:
                LOSSES.append(loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def transform(img):
    return torch.flatten(data.to_tensor_normalized(img))


def run():
    del LOSSES[:]
    torch.manual_seed(1)
    train_loader = DataLoader(data.MNIST(32, seed=0, transform=transform), batch_size=32)
    net = Net([784, 24, 24])
    x, y = next(iter(train_loader))
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    net.train(x_pos, x_neg)
    train_error = 1.0 - net.predict(x).eq(y).float().mean().item()
    return LOSSES + [train_error]
