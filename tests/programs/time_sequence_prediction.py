"""Time-sequence prediction: two LSTMCells learn sine waves, trained with L-BFGS.

Adapted from PyTorch's examples, time_sequence_prediction/{generate_sine_wave,train}.py
(https://github.com/pytorch/examples), BSD 3-Clause License, Copyright (c) 2017 PyTorch
contributors (full text in LICENSE-pytorch-examples beside this file). Changes: the
program's body is a function of the `torch` module it runs with (PyTorch or
dispatchtorch), the data are smaller (N sequences of length L instead of 100 x 1000,
generated in memory instead of traindata.pt), L-BFGS runs max_iter=6 iterations per step
(PyTorch's default: 20) with the strong-Wolfe line search, and it returns its losses.
"""
import numpy as np


def sine_waves(N=5, L=16, T=20, seed=2):
    """generate_sine_wave.py, smaller."""
    rng = np.random.RandomState(seed)
    x = np.empty((N, L), "int64")
    x[:] = np.array(range(L)) + rng.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype("float64")


def build(torch):
    nn = torch.nn

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, 51)
            self.lstm2 = nn.LSTMCell(51, 51)
            self.linear = nn.Linear(51, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):  # if we should predict the future
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.cat(outputs, dim=1)
            return outputs

    return Sequence()


def train(torch, seq, data, steps=2, future=5, max_iter=6):
    """train.py's loop; returns [(train loss, test loss)] per step."""
    nn, optim = torch.nn, torch.optim
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=max_iter,
                            line_search_fn="strong_wolfe")
    losses = []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            loss.backward()
            return loss
        train_loss = optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
        losses.append((float(train_loss.detach()), float(loss)))
    return losses
