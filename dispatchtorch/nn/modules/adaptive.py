"""AdaptiveLogSoftmaxWithLoss (Grave et al., efficient softmax approximation): a
head over the frequent classes plus one entry per tail cluster, each cluster a
low-rank projection."""
from __future__ import annotations

from collections import namedtuple

from ... import ops as _ops
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {list(input_.shape)}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {list(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        inp = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.shape[0]
        output = _ops.zeros(n, dtype=inp.dtype, device=inp.device)
        gather = target.clone()
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            used += rows.numel()
            if i == 0:
                continue
            relative = target.index_select(0, rows) - low
            cluster = F.log_softmax(self.tail[i - 1](inp.index_select(0, rows)), dim=1)
            local = cluster.gather(1, relative.unsqueeze(1)).squeeze(1)
            gather = _ops.where(mask, self.shortlist_size + i - 1, gather)
            output = output.index_add(0, rows, local)
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{target.min().item()}, {target.max().item()}] were "
                               f"found. ")
        head = F.log_softmax(self.head(inp), dim=1)
        output = output + head.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return _ops.cat(parts, 1)

    def log_prob(self, input):
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        return self.log_prob(input).argmax(-1)


