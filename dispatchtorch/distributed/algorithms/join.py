"""Join, Joinable, JoinHook: training on uneven inputs, as torch.distributed.algorithms.

A rank whose inputs ran out leaves the `with Join(...)` body and, in `__exit__`, shadows
the collectives its still-active peers run each iteration (each Joinable's JoinHook
main_hook) until every rank has joined; then each hook's post_hook runs once. Every
iteration of an active rank starts with `Join.notify_join_context` (an all-reduce of 1),
which the joined ranks meet with an all-reduce of 0: the sum is how many are active."""
from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

from ... import ops as _ops
from ..collectives import all_reduce
from ..group import get_rank

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank runs for one Joinable: main_hook once per iteration of the
    active ranks, post_hook(is_last_joiner) once all ranks joined."""

    def main_hook(self):
        """Shadow one iteration's collectives."""

    def post_hook(self, is_last_joiner):
        """After every rank joined (is_last_joiner: this rank was among the last)."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class whose per-iteration collectives a joined rank can shadow."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The JoinHook (kwargs: those given to Join)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the join context's small all-reduces."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group of the join context's all-reduces."""


class Join:
    """Context manager: `with Join([ddp, optimizer, ...]):` lets ranks with fewer inputs
    shadow the others until all are done (`enable=False`: a no-op;
    `throw_on_early_termination=True`: every rank raises once one runs out)."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable=enable,
                                         throw_on_early_termination=throw_on_early_termination,
                                         is_first_joinable=i == 0)
        group, device = None, None
        for j in joinables:
            if group is None:
                group = j.join_process_group
            elif group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = j.join_device
        self._process_group, self._device = group, device
        self._rank = get_rank(group)

    def __enter__(self):
        return None

    def __exit__(self, type, value, traceback):
        """Shadow the active ranks' iterations until all joined; then the post hooks."""
        if not self._enable or type:
            return                       # an exception propagates as it is
        is_last_joiner, i = True, 0
        while True:
            if i > 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means "
                              f"that rank {self._rank} has at least 1000 fewer inputs than "
                              f"other currently-active ranks. This level of skew could lead "
                              f"to performance degradation during training.", stacklevel=2)
            if self._num_nonjoined() == 0:
                break
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _num_nonjoined(self):
        n = _ops.zeros(1, device=self._device)
        all_reduce(n, group=self._process_group)
        return n.item()

    def _notify_procs_to_terminate(self):
        all_reduce(_ops.ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by an active rank at the start of each iteration (first joinable only):
        the Work of its all-reduce of 1, or None outside an enabled join context."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 f"``Joinable`` constructor")
        cfg = joinable._join_config
        if not cfg.is_first_joinable or not cfg.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = all_reduce(_ops.ones(1, device=device), group=group, async_op=True)
        if cfg.throw_on_early_termination:
            zeros = _ops.zeros(1, device=device)
            all_reduce(zeros, group=group)
            if zeros.item():
                work.wait()              # (no request left behind in MPI)
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
