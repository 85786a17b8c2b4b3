"""Sub-pixel convolution super-resolution, from
https://github.com/pytorch/examples/tree/main/super_resolution (model.py verbatim,
main.py's train loop). BSD 3-Clause License, Copyright (c) 2017, Pytorch
contributors: see LICENSE-pytorch-examples. Changes: synthetic low/high resolution
pairs instead of BSDS300, run() returns the loss of each step."""
import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.nn.init as init
import dispatchtorch.optim as optim


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def run(pairs, upscale_factor=3, lr=0.01, state=None):
    device = torch.device("cpu")
    model = Net(upscale_factor=upscale_factor).to(device)
    if state is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    criterion = nn.MSELoss()

    optimizer = optim.Adam(model.parameters(), lr=lr)
    losses = []
    for iteration, batch in enumerate(pairs, 1):
        input, target = torch.from_numpy(batch[0]).to(device), torch.from_numpy(batch[1]).to(device)

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return losses
