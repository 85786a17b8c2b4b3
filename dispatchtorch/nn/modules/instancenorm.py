"""InstanceNorm1d/2d/3d and their lazy forms: per-sample, per-channel statistics;
running statistics only when track_running_stats=True (PyTorch's default: off)."""
from __future__ import annotations

import warnings

from .. import functional as F
from .batchnorm import _BatchNorm, _lazy_norm


class _InstanceNorm(_BatchNorm):
    _spatial = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _check_input_dim(self, input):
        d = self._spatial
        if input.dim() not in (d + 1, d + 2):
            raise ValueError(f"expected {d + 1}D or {d + 2}D input (got {input.dim()}D input)")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False):
        # checkpoints of the old InstanceNorm carried running stats it did not use
        if not self.track_running_stats:
            for name in ("running_mean", "running_var"):
                key = prefix + name
                if key in state_dict:
                    error_msgs.append(f"Unexpected running stats buffer(s) \"{key}\" for "
                                      f"{type(self).__name__} with track_running_stats=False. "
                                      f"If state_dict is a checkpoint saved before 0.4.0, this "
                                      f"may be expected because {type(self).__name__} does not "
                                      f"track running stats by default since 0.4.0. Please "
                                      f"remove these keys from state_dict. If the running stats "
                                      f"are actually needed, instead set track_running_stats="
                                      f"True in {type(self).__name__} to enable them. See the "
                                      f"documentation of {type(self).__name__} for details.")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs, assign)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._spatial - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        unbatched = input.dim() == self._spatial + 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum
                              if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3


def _lazy_instance(base, name):
    """PyTorch's lazy instance norms default to affine=True, track_running_stats=True
    (unlike the eager ones)."""
    lazy = _lazy_norm(base, name)
    lazy.__module__ = __name__
    return lazy


LazyInstanceNorm1d = _lazy_instance(InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_instance(InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_instance(InstanceNorm3d, "LazyInstanceNorm3d")
