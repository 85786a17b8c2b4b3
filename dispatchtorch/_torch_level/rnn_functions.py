"""torch.lstm / gru / rnn_tanh / rnn_relu: ATen's whole-sequence RNN functions, the weights
passed in as ATen's flat list (per layer and direction: w_ih, w_hh, then b_ih, b_hh when
has_biases, then an LSTM's w_hr when h and c differ in size), in both overloads:
(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
and the packed (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
bidirectional). The layers run through nn.RNNBase's own loop (_run / _direction /
_step), so the functions compute exactly what nn.LSTM / GRU / RNN compute."""
from __future__ import annotations

from .. import ops as _ops
from .._tensor import Tensor
from ..nn.modules.rnn import RNNBase
from ..nn.utils.rnn import PackedSequence, pad_packed_sequence


class _Layers:
    """The part of an RNNBase that _run reads, over a flat weight list."""
    _run, _direction, _step = RNNBase._run, RNNBase._direction, RNNBase._step

    def __init__(self, mode, params, has_biases, has_proj, num_layers, dropout, train,
                 bidirectional):
        self.mode, self.num_layers, self.dropout = mode, int(num_layers), float(dropout)
        self.training, self.bidirectional = bool(train), bool(bidirectional)
        stride = 2 + 2 * bool(has_biases) + bool(has_proj)
        params = list(params)
        if len(params) % stride:
            raise RuntimeError("got an incorrect number of RNN parameters")
        groups = [params[i:i + stride] for i in range(0, len(params), stride)]
        if len(groups) < self.num_layers * (2 if bidirectional else 1):
            raise RuntimeError(f"{mode.lower()}: {len(groups)} weight groups for "
                               f"{self.num_layers} layers of {2 if bidirectional else 1} "
                               f"directions")
        self._groups = [(g[0], g[1], g[2] if has_biases else None,
                         g[3] if has_biases else None, g[-1] if has_proj else None)
                        for g in groups]

    def _weights(self, layer, d):
        return self._groups[layer * (2 if self.bidirectional else 1) + d]


def _states(mode, hx, layers):
    if mode == "LSTM":
        if not isinstance(hx, (list, tuple)) or len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        states = tuple(hx)
    else:
        states = (hx,)
    need = layers.num_layers * (2 if layers.bidirectional else 1)
    if any(s.shape[0] < need for s in states):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    return states


def _padded(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first):
    if input.dim() != 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 2)")
    has_proj = mode == "LSTM" and len(hx) == 2 and hx[0].shape[-1] != hx[1].shape[-1]
    layers = _Layers(mode, params, has_biases, has_proj, num_layers, dropout, train,
                     bidirectional)
    states = _states(mode, hx, layers)
    x = input.transpose(0, 1) if batch_first else input
    out, finals = layers._run(x, states, None)
    return (out.transpose(0, 1) if batch_first else out,) + finals


def _packed(mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
            bidirectional):
    """As RNNBase.forward runs a packed batch: padded, each sequence's state frozen past
    its length, the output packed again."""
    has_proj = mode == "LSTM" and len(hx) == 2 and hx[0].shape[-1] != hx[1].shape[-1]
    layers = _Layers(mode, params, has_biases, has_proj, num_layers, dropout, train,
                     bidirectional)
    states = _states(mode, hx, layers)
    x, lengths = pad_packed_sequence(PackedSequence(data, batch_sizes, None, None))
    lens = [int(v) for v in lengths.tolist()]
    live = _ops.tensor([[[n > t] for n in lens] for t in range(x.shape[0])], device=x.device)
    out, finals = layers._run(x, states, live)
    packed = _ops.cat([out[t, :b] for t, b in enumerate(batch_sizes.tolist())], 0)
    return (packed,) + finals


def _input_form(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first):
    return locals()


def _data_form(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
               bidirectional):
    return locals()


def _packed_call(mode, args, kwargs):
    """Which overload a call means: the packed one's second argument is the batch sizes,
    a tensor followed by the hidden state (the other's is hx, then the weight list)."""
    if "batch_sizes" in kwargs or "data" in kwargs:
        return True
    if len(args) < 2:
        return False
    return isinstance(args[1], Tensor) if mode == "LSTM" else \
        len(args) > 2 and isinstance(args[2], Tensor)


def _make(mode):
    name = mode.lower()

    def fn(*args, **kwargs):
        packed = _packed_call(mode, args, kwargs)
        form = _data_form if packed else _input_form
        try:
            bound = form(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}(): {e}".replace("_data_form() ", "").replace(
                "_input_form() ", "")) from None
        return _packed(mode, **bound) if packed else _padded(mode, **bound)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.{name}: the {mode} layers over the weight list; "
                  f"{'(output, h_n, c_n)' if mode == 'LSTM' else '(output, h_n)'}.")
    return fn


PUBLIC = {m.lower(): _make(m) for m in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")}
