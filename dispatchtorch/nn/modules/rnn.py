"""RNN, LSTM, GRU and their cells, with PyTorch's parameters (names, order, shapes,
U(-1/sqrt(H), 1/sqrt(H)) init), layouts (batch_first, unbatched), dropout between
layers, bidirectional layers, LSTM projections (proj_size) and packed sequences.

The input projection of a whole sequence is one matmul per layer and direction;
only the recurrent part steps through time. Packed (variable-length) batches run
padded, with each sequence's state frozen past its length, so the reverse
direction starts from each sequence's own end as in cuDNN.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import ops as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, pad_packed_sequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr):
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (h - n)


def _rnn_step(gi, h, w_hh, b_hh, relu):
    pre = gi + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (mode 'RNN_TANH', 'RNN_RELU', 'LSTM',
    'GRU')."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        kw = {"device": device, "dtype": dtype}
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for d in range(directions):
                in_size = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate_size, in_size)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_ops.empty(shape, **kw)))
                    names.append(name + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """cuDNN packs the weights into one buffer here; the weights are used as they
        are, so there is nothing to do (as PyTorch on CPU)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + suffix, None)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih") if self.bias else None,
                get("bias_hh") if self.bias else None,
                get("weight_hr") if self.proj_size > 0 else None)

    def _step(self, gi, state, w_hh, b_hh, w_hr):
        if self.mode == "LSTM":
            return _lstm_step(gi, state[0], state[1], w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return (_gru_step(gi, state[0], w_hh, b_hh),)
        return (_rnn_step(gi, state[0], w_hh, b_hh, self.mode == "RNN_RELU"),)

    def _direction(self, x, weights, state, reverse, live):
        w_ih, w_hh, b_ih, b_hh, w_hr = weights
        steps = x.shape[0]
        projected = F.linear(x, w_ih, b_ih)           # (T, N, G*H): all steps at once
        outs = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            new = self._step(projected[t], state, w_hh, b_hh, w_hr)
            if live is not None:          # packed: sequences past their length keep state
                m = live[t]
                new = tuple(_ops.where(m, a, b) for a, b in zip(new, state))
                outs[t] = _ops.where(m, new[0], 0.0)
            else:
                outs[t] = new[0]
            state = new
        return _ops.stack(outs, 0), state

    def _run(self, x, states, live):
        """x (T, N, F); states: (h0,) or (h0, c0), each (D*L, N, *)."""
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                idx = layer * directions + d
                seq, last = self._direction(x, self._weights(layer, d),
                                            tuple(s[idx] for s in states), d == 1, live)
                outs.append(seq)
                for f, s in zip(finals, last):
                    f.append(s)
            x = outs[0] if directions == 1 else _ops.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(_ops.stack(f, 0) for f in finals)

    def _state_sizes(self):
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (real, self.hidden_size) if self.mode == "LSTM" else (real,)

    def _check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if batch_sizes is None and input.dim() not in (2, 3):
            raise ValueError(f"{self!r}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D tensor instead")
        if batch_sizes is not None and input.dim() != expected:
            raise RuntimeError(f"{self!r}: input must have {expected} dimensions, got "
                               f"{input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{self!r}: input.size(-1) must be equal to input_size. "
                               f"Expected {self.input_size}, got {input.shape[-1]}")

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        sizes = self._state_sizes()
        live = None
        sorted_indices = unsorted_indices = None
        if packed:
            self._check_input(input.data, input.batch_sizes)
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
            padded, lengths = pad_packed_sequence(
                PackedSequence(input.data, input.batch_sizes, None, None))
            x, unbatched = padded, False
            lens = [int(v) for v in lengths.tolist()]
            steps = x.shape[0]
            live = _ops.tensor([[[n > t] for n in lens] for t in range(steps)],
                               device=x.device)
        else:
            self._check_input(input, None)
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else \
                (input.transpose(0, 1) if self.batch_first else input)
        batch = x.shape[1]
        if hx is None:
            states = tuple(_ops.zeros((self.num_layers * directions, batch, s), dtype=x.dtype,
                                      device=x.device) for s in sizes)
        else:
            given = tuple(hx) if lstm else (hx,)
            if lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
                raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
            if unbatched:
                for h in given:
                    if h.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {h.dim()}-D tensor")
                given = tuple(h.unsqueeze(1) for h in given)
            elif not packed:
                for h in given:
                    if h.dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but "
                                           f"got {h.dim()}-D tensor")
            if sorted_indices is not None:
                given = tuple(h.index_select(1, sorted_indices) for h in given)
            for i, (h, s) in enumerate(zip(given, sizes)):
                want = (self.num_layers * directions, batch, s)
                if tuple(h.shape) != want:
                    what = f"hidden[{i}]" if lstm else "hidden"
                    raise RuntimeError(f"Expected {what} size {want}, got {list(h.shape)}")
            states = given
        out, finals = self._run(x, states, live)
        if unsorted_indices is not None:
            finals = tuple(h.index_select(1, unsorted_indices) for h in finals)
        if packed:
            data = _ops.cat([out[t, :b] for t, b in enumerate(input.batch_sizes.tolist())], 0)
            output = PackedSequence(data, input.batch_sizes, sorted_indices, unsorted_indices)
        elif unbatched:
            output = out.squeeze(1)
            finals = tuple(h.squeeze(1) for h in finals)
        else:
            output = out.transpose(0, 1) if self.batch_first else out
        return output, (finals if lstm else finals[0])

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self_nl = args[3]
            args = args[:3] + args[4:]
        else:
            self_nl = kwargs.pop("nonlinearity", "tanh")
        if self_nl == "tanh":
            mode = "RNN_TANH"
        elif self_nl == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nl}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nl


class LSTM(RNNBase):
    """Gates (i, f, g, o): c' = f*c + i*g, h' = o*tanh(c') (times W_hr with proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gates (r, z, n): n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), h' = (1-z)*n + z*h."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_ops.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_ops.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_ops.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_ops.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, count):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            zeros = _ops.zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
            states = (zeros,) * count
        else:
            states = tuple(hx) if count == 2 else (hx,)
            for h in states:
                if h.dim() != input.dim():
                    raise ValueError(f"{type(self).__name__}: Expected hidden to be "
                                     f"{input.dim()}D, got {h.dim()}D instead")
            if not batched:
                states = tuple(h.unsqueeze(0) for h in states)
            for h in states:
                if tuple(h.shape) != (x.shape[0], self.hidden_size):
                    raise RuntimeError(f"hidden has inconsistent size: got {list(h.shape)}, "
                                       f"expected {[x.shape[0], self.hidden_size]}")
        return x, states, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh, self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                          self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)
