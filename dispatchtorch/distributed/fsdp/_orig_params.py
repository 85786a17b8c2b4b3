"""use_orig_params=True: each original parameter stays a registered nn.Parameter, a view
of its part of this rank's shard (1-D, possibly empty; its own shape under NO_SHARD), so
an optimizer steps the shard through them; the shard's gradient, once autograd has
accumulated it, is handed to those views' .grad."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...nn.parameter import Parameter


class OrigParams:
    def __init__(self, handle):
        self.handle = handle
        h = handle
        start = (h.rank if h.sharded else 0) * h.shard_numel
        self.ranges, self.params, made = [], [], {}
        flat = h.flat_param.detach()
        for info in h.infos:
            if info.shared:
                self.params.append(made[info.offset])
                continue
            lo = min(max(info.offset - start, 0), h.shard_numel)
            hi = min(max(info.offset + info.numel - start, 0), h.shard_numel)
            view = flat[lo:hi]
            if hi - lo == info.numel and not h.sharded:
                view = view.view(info.shape)
            p = made[info.offset] = Parameter(view, requires_grad=h.flat_param.requires_grad)
            self.ranges.append((lo, hi, p))
            self.params.append(p)
        self.hook = h.flat_param.register_post_accumulate_grad_hook(self._hand_out)

    def register(self):
        for info, p in zip(self.handle.infos, self.params):
            info.module.__dict__.pop(info.name, None)
            info.module._parameters[info.name] = p

    def _hand_out(self, flat):
        """The shard's gradient into the original parameters' .grad (accumulating)."""
        g = flat.grad
        flat.grad = None
        with no_grad():
            for lo, hi, p in self.ranges:
                part = g[lo:hi].view(p.shape)
                if p.grad is None:
                    p.grad = part.clone()
                else:
                    p.grad.add_(part)
