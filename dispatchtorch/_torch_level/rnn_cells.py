"""torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell: one step of a recurrent cell
with the weights passed in, ATen's (input, hx, w_ih, w_hh, b_ih=None, b_hh=None). Batched
(2-D) input only, as ATen's; the steps are nn.modules.rnn's, which the RNN modules run."""
from __future__ import annotations

from .._tensor import Tensor
from ..ops._out import check_tensor_list
from ..nn import functional as F
from ..nn.modules.rnn import _gru_step, _lstm_step, _rnn_step


def _tensors(fn, **named):
    """PyTorch's parser: each of input, hx, w_ih, w_hh a Tensor, the biases Tensor or None."""
    for pos, (name, value) in enumerate(named.items(), 1):
        optional = name.startswith("b_")
        if not isinstance(value, Tensor) and not (optional and value is None):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(value).__name__}")


def _check(input, hx, w_ih, w_hh, label="0"):
    """ATen's check_rnn_cell_forward_input / _hidden (input.size(1) is read whatever the
    rank, so a 1-D input is its IndexError and a 3-D one reaches linear)."""
    if input.dim() < 2:
        n = max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got 1)")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                           f"batch size {hx.shape[0]}")
    if hx.shape[1] != w_hh.shape[1]:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                           f"expected {w_hh.shape[1]}")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h, c) after one LSTM step from hx = (h, c)."""
    check_tensor_list(hx, "lstm_cell", "hx", 2, 1)
    _tensors("lstm_cell", input=input, hx=hx[0] if hx else input, w_ih=w_ih, w_hh=w_hh,
             b_ih=b_ih, b_hh=b_hh)
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check(input, h, w_ih, w_hh, "0")
    _check(input, c, w_ih, w_hh, "1")
    return _lstm_step(F.linear(input, w_ih, b_ih), h, c, w_hh, b_hh, None)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _tensors("gru_cell", input=input, hx=hx, w_ih=w_ih, w_hh=w_hh, b_ih=b_ih, b_hh=b_hh)
    _check(input, hx, w_ih, w_hh)
    return _gru_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _tensors("rnn_tanh_cell", input=input, hx=hx, w_ih=w_ih, w_hh=w_hh, b_ih=b_ih, b_hh=b_hh)
    _check(input, hx, w_ih, w_hh)
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, False)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _tensors("rnn_relu_cell", input=input, hx=hx, w_ih=w_ih, w_hh=w_hh, b_ih=b_ih, b_hh=b_hh)
    _check(input, hx, w_ih, w_hh)
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, True)


PUBLIC = {"lstm_cell": lstm_cell, "gru_cell": gru_cell, "rnn_tanh_cell": rnn_tanh_cell,
          "rnn_relu_cell": rnn_relu_cell}
