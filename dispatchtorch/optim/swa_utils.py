"""Stochastic weight averaging and EMA (torch.optim.swa_utils): AveragedModel keeps a
running average of a model's parameters, SWALR anneals to a constant SWA learning
rate, update_bn recomputes BatchNorm statistics for the averaged weights."""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import _dtype as D
from .. import ops as _ops
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ._lr_base import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         f"range.")


def get_ema_multi_avg_fn(decay=0.999):
    """In place on lists: ema = lerp(ema, current, 1 - decay)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for e, c in zip(ema_param_list, current_param_list):
            if e.dtype.is_floating_point:
                e.lerp_(c, 1 - decay)
            else:
                e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In place on lists: the running mean over num_averaged + 1 models."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        # a tensor count gives a float32 weight, as in PyTorch
        weight = 1 / (num_averaged + 1)
        weight = weight.item() if isinstance(weight, Tensor) else weight
        for a, c in zip(averaged_param_list, current_param_list):
            if a.dtype.is_floating_point:
                a.lerp_(c, weight)
            else:
                a.copy_(a + (c - a) / (num_averaged + 1))      # integer buffers truncate
    return swa_update


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers) are averaged
    by update_parameters(model): SWA's running mean unless avg_fn / multi_avg_fn."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _ops.tensor(0, dtype=D.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        with no_grad():
            self._update(model)

    def _update(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        for a, m in zip(mine, theirs):
            m = m.detach().to(a.device)
            averaged.append(a.detach())
            current.append(m)
            if first:
                a.detach().copy_(m)
        if not first:
            if self.avg_fn is not None:
                for a, m in zip(averaged, current):
                    a.copy_(self.avg_fn(a, m, self.n_averaged.to(a.device)))
            else:
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                groups = {}
                for a, m in zip(averaged, current):
                    groups.setdefault((str(a.device), a.dtype.name), ([], []))
                    groups[(str(a.device), a.dtype.name)][0].append(a)
                    groups[(str(a.device), a.dtype.name)][1].append(m)
                for (device, _), (a_list, m_list) in groups.items():
                    fn(a_list, m_list, self.n_averaged.to(device))
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged.add_(1)


def _batchnorm_class():
    try:
        from ..nn.modules.batchnorm import _BatchNorm
    except ImportError:
        from ..nn.modules.normalization import _BatchNorm
    return _BatchNorm


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics with one pass over loader
    (cumulative averages: momentum None), as the averaged weights need."""
    with no_grad():
        batchnorm = _batchnorm_class()
        momenta = {}
        for module in model.modules():
            if isinstance(module, batchnorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to swa_lr over anneal_epochs ('cos' or 'linear'), then
    holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
