"""Variational auto-encoder, from https://github.com/pytorch/examples/tree/main/vae
(main.py's VAE, loss_function and train loop). BSD 3-Clause License, Copyright (c)
2017, Pytorch contributors: see LICENSE-pytorch-examples. Changes: synthetic
"images" in [0, 1] instead of MNIST, the reparameterisation noise comes from
`sample_noise` (torch.randn_like unless the caller supplies draws), run() returns
the loss of each step."""
import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F
from dispatchtorch import optim

sample_noise = torch.randn_like


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = sample_noise(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def run(batches, noise=None, state=None):
    global sample_noise
    if noise is not None:
        sample_noise = lambda t: torch.from_numpy(noise(tuple(t.shape)))  # noqa: E731
    device = torch.device("cpu")
    model = VAE().to(device)
    if state is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    losses = []
    for batch_idx, data in enumerate(batches):
        data = torch.from_numpy(data).to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    return losses
