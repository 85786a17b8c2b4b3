"""torch.func.replace_all_batch_norm_modules_: BatchNorm layers that keep no running
statistics, so vmap over a model (per-sample gradients, ensembles) does not write one
batch entry's statistics into buffers the whole batch shares."""
from __future__ import annotations

from ..nn.modules.batchnorm import _BatchNorm


def replace_all_batch_norm_modules_(root):
    """In place: every BatchNorm in root forgets its running statistics and stops
    tracking them (batch statistics in training and in eval). Returns root."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
