"""A siamese network on ResNet-18 features, from
https://github.com/pytorch/examples/tree/main/siamese_network (main.py's SiameseNetwork,
APP_MATCHER, train and test; Adadelta + StepLR). BSD 3-Clause License, Copyright (c)
2017, Pytorch contributors: see LICENSE-pytorch-examples. Changes: synthetic MNIST
(synthetic_mnist.py) and a narrow ResNet-18 (resnet_torchvision_layout.py, stage widths
64-8-16-16; torchvision's is 64-128-256-512); float64 (the model .double(), images
.double()): BatchNorm over 1x1 feature maps of 8 samples amplifies float32 rounding
differences between libraries tenfold per step; 2 epochs of 3 batches (20 images: every class twice, so the pair sampler can find a second image of a class); seeds for
`random` and torch; run() returns each step's loss and each test loss."""
import argparse
import random

import numpy as np

import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.optim as optim
from dispatchtorch.optim.lr_scheduler import StepLR
from dispatchtorch.utils.data import Dataset
from runner import load

datasets = load("synthetic_mnist", torch.__name__)
models = load("resnet_torchvision_layout", torch.__name__)


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        # get resnet model
        self.resnet = models.resnet18(weights=None, widths=(64, 8, 16, 16))

        # over-write the first conv layer to be able to read MNIST images
        # as resnet18 reads (3,x,x) where 3 is RGB channels
        # whereas MNIST has (1,x,x) where 1 is a gray-scale channel
        self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.fc_in_features = self.resnet.fc.in_features

        # remove the last layer of resnet18 (linear layer which is before avgpool layer)
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))

        # add linear layers to compare between the features of the two images
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 1),
        )

        self.sigmoid = nn.Sigmoid()

        # initialize the weights
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        output = self.sigmoid(output)
        return output


class APP_MATCHER(Dataset):
    def __init__(self, n, seed):
        super(APP_MATCHER, self).__init__()
        self.dataset = datasets.MNIST(n, seed)
        self.data = self.dataset.data.unsqueeze(1).clone()
        self.group_examples()

    def group_examples(self):
        np_arr = np.array(self.dataset.targets.clone(), dtype=None, copy=None)
        self.grouped_examples = {}
        for i in range(0,10):
            self.grouped_examples[i] = np.where((np_arr==i))[0]

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        selected_class = random.randint(0, 9)
        random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
        index_1 = self.grouped_examples[selected_class][random_index_1]
        image_1 = self.data[index_1].clone().double()
        if index % 2 == 0:
            random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
            while random_index_2 == random_index_1:
                random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
            index_2 = self.grouped_examples[selected_class][random_index_2]
            image_2 = self.data[index_2].clone().double()
            target = torch.tensor(1, dtype=torch.double)
        else:
            other_selected_class = random.randint(0, 9)
            while other_selected_class == selected_class:
                other_selected_class = random.randint(0, 9)
            random_index_2 = random.randint(0, self.grouped_examples[other_selected_class].shape[0]-1)
            index_2 = self.grouped_examples[other_selected_class][random_index_2]
            image_2 = self.data[index_2].clone().double()
            target = torch.tensor(0, dtype=torch.double)
        return image_1, image_2, target


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    criterion = nn.BCELoss()
    for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
        images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())


def test(model, device, test_loader, losses):
    model.eval()
    test_loss = 0
    correct = 0
    criterion = nn.BCELoss()
    with torch.no_grad():
        for (images_1, images_2, targets) in test_loader:
            images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
            outputs = model(images_1, images_2).squeeze()
            test_loss += criterion(outputs, targets).sum().item()  # sum up batch loss
            pred = torch.where(outputs > 0.5, 1, 0)  # get the index of the max log-probability
            correct += pred.eq(targets.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    losses += [test_loss, correct]


def run(epochs=2):
    args = argparse.Namespace(batch_size=8, test_batch_size=20, lr=1.0, gamma=0.7, seed=1)
    random.seed(0)
    torch.manual_seed(args.seed)
    device = torch.device("cpu")
    train_loader = torch.utils.data.DataLoader(APP_MATCHER(20, 0), batch_size=args.batch_size)
    test_loader = torch.utils.data.DataLoader(APP_MATCHER(20, 1), batch_size=args.test_batch_size)
    model = SiameseNetwork().to(device).double()
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    losses = []
    for epoch in range(1, epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        test(model, device, test_loader, losses)
        scheduler.step()
    return losses
