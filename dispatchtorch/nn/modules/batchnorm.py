"""BatchNorm1d/2d/3d, their lazy forms, and SyncBatchNorm."""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin, install_lazy_hooks
from .module import Module


class _BatchNorm(Module):
    _version = 2
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_ops.ones(num_features, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(_ops.zeros(num_features, **kw))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _ops.zeros(num_features, **kw))
            self.register_buffer("running_var", _ops.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", _ops.tensor(0, dtype=D.int64,
                                                                    device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"{self!r}: expected {' or '.join(f'{d}D' for d in self._dims)} input "
                             f"(got {input.dim()}D input of shape {list(input.shape)})")
        if input.shape[1] != self.num_features:
            raise RuntimeError(f"{self!r}: expected input with {self.num_features} channels "
                               f"(dim 1), got input of shape {list(input.shape)}")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:        # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics span a process group. Without distributed training
    (one process) it is BatchNorm over the local batch, the same numbers."""
    _dims = tuple(range(2, 9))

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def forward(self, input):
        import importlib
        try:
            dist = importlib.import_module("dispatchtorch.distributed")
        except ImportError:
            dist = None
        if self.training and dist is not None and \
                getattr(dist, "is_initialized", lambda: False)() and \
                dist.get_world_size(self.process_group) > 1:
            raise NotImplementedError("SyncBatchNorm across processes is not supported; use "
                                      "BatchNorm (per-process statistics)")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in list(module.named_children()):
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _LazyNormBase(LazyModuleMixin):
    """num_features comes from the first input's dim 1."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for name in ("weight", "bias", "running_mean", "running_var"):
                    t = getattr(self, name, None)
                    if t is not None:
                        t.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.zero_()
                    self.running_var.fill_(1)
                self.reset_parameters()


def _lazy_norm(base, name):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        base.__init__(self, 0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _ops.tensor(0, dtype=D.int64, device=device)
        install_lazy_hooks(self)

    return type(name, (_LazyNormBase, base), {"__init__": __init__, "cls_to_become": base,
                                              "__module__": base.__module__,
                                              "__qualname__": name})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "LazyBatchNorm1d")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "LazyBatchNorm2d")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "LazyBatchNorm3d")
