"""PowerSGD (Vogels et al., 2019) as PyTorch's powerSGD_hook: each gradient matrix M of a
bucket is sent as a rank-r pair P = M Q, Q = M^T P (both all-reduced, P orthogonalised
between), with error feedback and warm-started Q; 1-D and small tensors go uncompressed.
Before `start_powerSGD_iter` iterations it is allreduce_hook. (batched_powerSGD_hook and
the batching of same-shape tensors are absent.)"""
from __future__ import annotations

import numpy as np

from .... import distributed as dist
from .... import ops as _ops
from ....random import fork_rng, manual_seed
from .default_hooks import _allreduce_fut

__all__ = ["PowerSGDState", "powerSGD_hook"]


class PowerSGDState:
    """PyTorch's PowerSGDState: the configuration, the per-bucket error and P/Q memories,
    and the iteration count (one per backward, counted at the last bucket)."""

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
                 min_compression_rate=2, use_error_feedback=True, warm_start=True,
                 orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000,
                 batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or "
                             "`warm_start` is enabled, because PowerSGD can only be applied "
                             "after the first two iterations in DDP.")
        if batch_tensors_with_same_shape:
            raise NotImplementedError("PowerSGDState(batch_tensors_with_same_shape=True) is not "
                                      "implemented in dispatchtorch")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.batch_tensors_with_same_shape = False
        self.rng = np.random.RandomState(random_seed)
        self.error_dict, self.p_memory_dict, self.q_memory_dict = {}, {}, {}
        self.iter = 0
        self.total_numel_before_compression = self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0

    def maybe_increase_iter(self, bucket):
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self):
        """(rate, elements before compression, elements after), summed so far."""
        after = self.total_numel_after_compression
        return (self.total_numel_before_compression / after if after > 0 else 0,
                self.total_numel_before_compression, after)


def _orthogonalize(m, epsilon=0):
    """Gram-Schmidt on the columns of each matrix of the batch `m` (b x n x r), in place
    (PyTorch takes QR beyond rank 2: the same column space, other signs possible)."""
    for i in range(m.shape[2]):
        col = m[:, :, i:i + 1]
        norm = _ops.norm(col, dim=1, keepdim=True)
        col.div_(norm + epsilon if epsilon else norm)
        if i + 1 < m.shape[2]:
            rest = m[:, :, i + 1:]
            rest.sub_(_ops.sum(col * rest, dim=1, keepdim=True) * col)


def _split(state, tensors):
    """(matrices to compress, tensors sent as they are), counting the compression."""
    comp, plain = [], []
    for t in tensors:
        mat = t.view(t.shape[0], -1)
        n, m = mat.shape
        r = min(n, m, state.matrix_approximation_rank)
        state.total_numel_before_compression += n * m
        if (n + m) * r * state.min_compression_rate < n * m:
            comp.append(mat)
            state.total_numel_after_compression += (n + m) * r
        else:
            plain.append(t)
            state.total_numel_after_compression += n * m
    return comp, plain


def _memories(state, index, mats, like):
    """Views (1 x n x r, 1 x m x r) of the bucket's P and Q memories; whether Q is new."""
    rank = [min(*m.shape, state.matrix_approximation_rank) for m in mats]
    fresh = not state.warm_start or index not in state.p_memory_dict
    if fresh:
        sp = sum(m.shape[0] * r for m, r in zip(mats, rank))
        sq = sum(m.shape[1] * r for m, r in zip(mats, rank))
        state.p_memory_dict[index] = _ops.empty((sp,), dtype=like.dtype, device=like.device)
        state.q_memory_dict[index] = _ops.empty((sq,), dtype=like.dtype, device=like.device)
    ps, qs, ip, iq = [], [], 0, 0
    for m, r in zip(mats, rank):
        n, k = m.shape
        ps.append(state.p_memory_dict[index][ip:ip + n * r].view(1, n, r))
        qs.append(state.q_memory_dict[index][iq:iq + k * r].view(1, k, r))
        ip, iq = ip + n * r, iq + k * r
    return ps, qs, fresh


def powerSGD_hook(state, bucket):
    """The bucket averaged through rank-`matrix_approximation_rank` approximations."""
    group = state.process_group if state.process_group is not None else dist.group.WORLD
    world = group.size()
    buf = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(group, buf)
    index = bucket.index()
    before = None
    if state.use_error_feedback:
        if index in state.error_dict:
            buf.add_(state.error_dict[index])
        else:
            state.error_dict[index] = _ops.zeros_like(buf)
        before = buf.detach().clone()
    mats, plain = _split(state, bucket.gradients())
    plain_flat = (_ops.cat([t.reshape(-1) for t in plain]) if plain
                  else _ops.zeros((0,), dtype=buf.dtype, device=buf.device))
    ps, qs, fresh = _memories(state, index, mats, buf)
    if fresh:
        with fork_rng(devices=[]):
            manual_seed(int(state.rng.randint(1_000_000_000)))
            for q in qs:
                q.copy_(_ops.randn(*q.shape, dtype=buf.dtype))
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for m, q, p in zip(mats, qs, ps):
        p.copy_(m.unsqueeze(0) @ q)

    def allreduce_ps(fut):
        flat = fut.value()[0].div_(world)
        at = 0
        for t in plain:
            t.copy_(flat[at:at + t.numel()].view(t.shape))
            at += t.numel()
        return dist.all_reduce(state.p_memory_dict[index], group=group,
                               async_op=True).get_future().wait()[0]

    def compute_qs(fut):
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for m, p, q in zip(mats, ps, qs):
            q.copy_(m.unsqueeze(0).transpose(1, 2) @ p)
        return dist.all_reduce(state.q_memory_dict[index], group=group,
                               async_op=True).get_future().wait()[0]

    def decompress(fut):
        state.q_memory_dict[index].div_(world)
        for p, q, m in zip(ps, qs, mats):
            m.copy_((p @ q.transpose(1, 2))[0])
        if state.use_error_feedback:
            state.error_dict[index] = before - buf
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return buf
    return (dist.all_reduce(plain_flat, group=group, async_op=True).get_future()
            .then(allreduce_ps).then(compute_qs).then(decompress))
