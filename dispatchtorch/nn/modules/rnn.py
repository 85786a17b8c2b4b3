"""LSTM and GRU: multi-layer, optionally bidirectional, batch_first, PyTorch's gate
order, parameter names and U(-1/sqrt(H), 1/sqrt(H)) initialisation.

The input projection of a whole sequence is one matmul per layer and direction;
only the recurrent part steps through time.
"""
from __future__ import annotations

import math

from ... import ops as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _RNNBase(Module):
    _gates = 1

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if proj_size:
            raise NotImplementedError(f"{type(self).__name__}: proj_size is not supported")
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than 0")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        kw = {"device": device, "dtype": dtype}
        gh = self._gates * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else hidden_size * directions
                names = [("weight_ih", (gh, in_size)), ("weight_hh", (gh, hidden_size))]
                if bias:
                    names += [("bias_ih", (gh,)), ("bias_hh", (gh,))]
                for name, shape in names:
                    setattr(self, name + suffix, Parameter(_ops.empty(shape, **kw)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, layer, d):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
        b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
        return (getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix),
                b_ih, b_hh)

    def _check(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"{self!r}: expected input to be 2D (unbatched) or 3D, got "
                             f"{input.dim()}D tensor of shape {list(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{self!r}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _state(self, hx, batch, input, name):
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            return _ops.zeros(shape, dtype=input.dtype, device=input.device)
        if tuple(hx.shape) != shape:
            raise RuntimeError(f"{self!r}: Expected {name} size {shape}, got {list(hx.shape)}")
        return hx

    def _run(self, input, states):
        """input (T, N, F); states: one tuple of (D*L, N, H) tensors per state kind."""
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        x = input
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                idx = layer * directions + d
                init_state = tuple(s[idx] for s in states)
                seq, last = self._direction(x, w_ih, w_hh, b_ih, b_hh, init_state, reverse=d == 1)
                outs.append(seq)
                for f, s in zip(finals, last):
                    f.append(s)
            x = outs[0] if directions == 1 else _ops.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(_ops.stack(f, 0) for f in finals)

    def _direction(self, x, w_ih, w_hh, b_ih, b_hh, state, reverse):
        steps = x.shape[0]
        projected = F.linear(x, w_ih, b_ih)           # (T, N, G*H): all steps at once
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        outs = [None] * steps
        for t in order:
            state = self._cell(projected[t], state, w_hh, b_hh)
            outs[t] = state[0]
        return _ops.stack(outs, 0), state

    def _layout(self, input, hx_batched):
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return input, unbatched

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _output(self, out, unbatched):
        if unbatched:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out


class LSTM(_RNNBase):
    """Gates (i, f, g, o): c' = f*c + i*g, h' = o*tanh(c')."""
    _gates = 4

    def _cell(self, gi, state, w_hh, b_hh):
        h, c = state
        gates = gi + F.linear(h, w_hh, b_hh)
        H = self.hidden_size
        i = gates.narrow(1, 0, H).sigmoid()
        f = gates.narrow(1, H, H).sigmoid()
        g = gates.narrow(1, 2 * H, H).tanh()
        o = gates.narrow(1, 3 * H, H).sigmoid()
        c = f * c + i * g
        return o * c.tanh(), c

    def forward(self, input, hx=None):
        self._check(input)
        x, unbatched = self._layout(input, hx)
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError(f"{self!r}: hx must be a tuple (h_0, c_0)")
            if unbatched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        batch = x.shape[1]
        h0 = self._state(None if hx is None else hx[0], batch, x, "hidden")
        c0 = self._state(None if hx is None else hx[1], batch, x, "cell")
        out, (h, c) = self._run(x, (h0, c0))
        if unbatched:
            h, c = h.squeeze(1), c.squeeze(1)
        return self._output(out, unbatched), (h, c)


class GRU(_RNNBase):
    """Gates (r, z, n): n = tanh(W_in x + b_in + r*(W_hn h + b_hn)), h' = (1-z)*n + z*h."""
    _gates = 3

    def _cell(self, gi, state, w_hh, b_hh):
        h, = state
        gh = F.linear(h, w_hh, b_hh)
        H = self.hidden_size
        r = (gi.narrow(1, 0, H) + gh.narrow(1, 0, H)).sigmoid()
        z = (gi.narrow(1, H, H) + gh.narrow(1, H, H)).sigmoid()
        n = (gi.narrow(1, 2 * H, H) + r * gh.narrow(1, 2 * H, H)).tanh()
        return (n + z * (h - n),)

    def forward(self, input, hx=None):
        self._check(input)
        x, unbatched = self._layout(input, hx)
        if hx is not None and unbatched:
            hx = hx.unsqueeze(1)
        h0 = self._state(hx, x.shape[1], x, "hidden")
        out, (h,) = self._run(x, (h0,))
        if unbatched:
            h = h.squeeze(1)
        return self._output(out, unbatched), h
