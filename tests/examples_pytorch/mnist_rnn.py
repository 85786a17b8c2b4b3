"""MNIST with an LSTM, from https://github.com/pytorch/examples/tree/main/mnist_rnn
(main.py's Net, train loop, Adadelta + StepLR). BSD 3-Clause License, Copyright (c)
2017, Pytorch contributors: see LICENSE-pytorch-examples. Changes: synthetic MNIST
(synthetic_mnist.py) in place of the download, 2 epochs of 2 batches of 8; run()
returns each step's loss and the test losses."""
import argparse

import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F
import dispatchtorch.optim as optim
from dispatchtorch.optim.lr_scheduler import StepLR
from runner import load

data = load("synthetic_mnist", torch.__name__)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input):
        input = input.reshape(-1, 28, 28)
        output, hidden = self.rnn(input)
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())


def test(args, model, device, test_loader, losses):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    losses.append(test_loss)


def run(epochs=2):
    args = argparse.Namespace(batch_size=8, test_batch_size=16, lr=0.1, gamma=0.7, seed=1)
    device = torch.device("cpu")
    torch.manual_seed(args.seed)
    train_loader = torch.utils.data.DataLoader(
        data.MNIST(16, seed=0, transform=data.to_tensor_normalized),
        batch_size=args.batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(
        data.MNIST(16, seed=1, transform=data.to_tensor_normalized),
        batch_size=args.test_batch_size, shuffle=True)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    losses = []
    for epoch in range(1, epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        test(args, model, device, test_loader, losses)
        scheduler.step()
    return losses
