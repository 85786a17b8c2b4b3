"""_torch_level's nn_more, rnn_cells and random_counts called at their edges and wrongly,
against PyTorch: convolution's weight rank and bool `transposed`, conv_tbc's bias wording
and its negative pad (which crops time steps in ATen), embedding_bag's and the grid
samplers' parser checks, the rnn cells' argument types and `hidden0` wording (and a 3-D
input reaching linear, as ATen's), poisson / binomial's positions and generator type."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch")
import dispatchtorch as dt  # noqa: E402
from raised_as_pytorch import raised as _raised  # noqa: E402

_rng = np.random.default_rng(0)


def _r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


X, W, B = _r(2, 3, 5, 5), _r(4, 3, 3, 3), _r(4)
TB, WT = _r(6, 2, 3), _r(2, 3, 4)
E, IND, OFF = _r(10, 3), np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4])
IMG, GRID, THETA = _r(2, 3, 4, 4), _rng.uniform(-1, 1, (2, 4, 4, 2)).astype(np.float32), _r(2, 2, 3)
XI, H, C = _r(3, 4), _r(3, 5), _r(3, 5)
WIH, WHH, RIH, RHH = _r(20, 4), _r(20, 5), _r(5, 4), _r(5, 5)


def T(lib, a):
    return lib.tensor(a)


RAISES = {
    "convolution_1d_weight": lambda L: L.convolution(T(L, X), L.ones(3), None, [1], [0], [1],
                                                     False, [0], 1),
    "convolution_transposed_int": lambda L: L.convolution(T(L, X), T(L, W), T(L, B), [1], [1],
                                                          [1], 0, [0], 1),
    "conv_tbc_bias_size": lambda L: L.conv_tbc(T(L, TB), T(L, WT), L.zeros(3)),
    "conv_tbc_pad_float": lambda L: L.conv_tbc(T(L, TB), T(L, WT), L.zeros(4), 1.5),
    "conv_tbc_pad_too_negative": lambda L: L.conv_tbc(T(L, TB), T(L, WT), L.zeros(4), -3),
    "embedding_bag_offsets_none": lambda L: L.embedding_bag(T(L, E), T(L, IND.reshape(2, 4)),
                                                            None),
    "embedding_bag_include_last_int": lambda L: L.embedding_bag(
        T(L, E), T(L, IND), T(L, OFF), False, 0, False, None, 1),
    "grid_sampler_2d_align_int": lambda L: L.grid_sampler_2d(T(L, IMG), T(L, GRID), 0, 0, 1),
    "grid_sampler_align_int": lambda L: L.grid_sampler(T(L, IMG), T(L, GRID), 0, 0, 1),
    "affine_grid_align_int": lambda L: L.affine_grid_generator(T(L, THETA), (2, 3, 4, 5), 0),
    "lstm_cell_hx_tensor": lambda L: L.lstm_cell(T(L, XI), T(L, H), T(L, WIH), T(L, WHH)),
    "lstm_cell_hx_none_element": lambda L: L.lstm_cell(T(L, XI), (T(L, H), None), T(L, WIH),
                                                       T(L, WHH)),
    "lstm_cell_three_states": lambda L: L.lstm_cell(T(L, XI), (T(L, H),) * 3, T(L, WIH),
                                                    T(L, WHH)),
    "rnn_tanh_cell_hx_none": lambda L: L.rnn_tanh_cell(T(L, XI), None, T(L, RIH), T(L, RHH)),
    "rnn_relu_cell_bias_int": lambda L: L.rnn_relu_cell(T(L, XI), T(L, H), T(L, RIH),
                                                        T(L, RHH), 1),
    "gru_cell_batch": lambda L: L.gru_cell(T(L, XI), T(L, H[:2]), L.ones(15, 4), L.ones(15, 5)),
    "rnn_tanh_cell_hidden_size": lambda L: L.rnn_tanh_cell(T(L, XI), T(L, H[:, :4]), T(L, RIH),
                                                           T(L, RHH)),
    "rnn_tanh_cell_3d_input": lambda L: L.rnn_tanh_cell(L.ones(3, 4, 2), T(L, H), T(L, RIH),
                                                        T(L, RHH)),
    "rnn_tanh_cell_1d_input": lambda L: L.rnn_tanh_cell(L.ones(4), T(L, H[0]), T(L, RIH),
                                                        T(L, RHH)),
    "poisson_not_tensor": lambda L: L.poisson(1.0),
    "poisson_generator_int": lambda L: L.poisson(L.ones(3), 1),
    "binomial_prob_float": lambda L: L.binomial(L.ones(3), 0.5),
    "binomial_generator_int": lambda L: L.binomial(L.ones(3), L.ones(3), 1),
}


@pytest.mark.parametrize("name", list(RAISES))
def test_raises_as_pytorch(name):
    assert _raised(dt, RAISES[name]) == _raised(torch, RAISES[name])


@pytest.mark.parametrize("pad", [-1, -2, 0, 1])
def test_conv_tbc_pad_as_pytorch(pad):
    ours = dt.conv_tbc(T(dt, TB), T(dt, WT), dt.ones(4), pad)
    theirs = torch.conv_tbc(T(torch, TB), T(torch, WT), torch.ones(4), pad)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
