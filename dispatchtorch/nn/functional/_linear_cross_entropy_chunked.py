"""linear_cross_entropy's chunked path (PyTorch's LinearCrossEntropyOptions): the batch
is processed `batch_chunk_size` rows at a time, so the full (N, num_classes) logits are
never held at once.

Scalar reductions ('mean', 'sum') compute the gradients chunk by chunk inside forward
and scale them by the output gradient in backward (PyTorch's default; no double
backward). reduction='none' keeps the inputs and recomputes each chunk's logits in
backward. Every chunk is computed in `acc_dtype` (PyTorch's 'accurate' policy: the
policies differ only in which low-precision intermediates they keep).
"""
from __future__ import annotations

from ... import _dtype as D
from ... import ops as _ops
from ...autograd.function import Function, once_differentiable

_LOWP = (D.float16, D.bfloat16)


def chunk_size(options, n, in_features, num_classes):
    """Rows per chunk, as PyTorch's LinearCrossEntropyOptions._adjust resolves it (an
    options object of either library: read by its field names)."""
    given = getattr(options, "batch_chunk_size", None)
    method = getattr(options, "chunking_method", "auto")
    if method == "auto":
        method = None if given is not None else "aspect_ratio:2"
    size = n if given is None else min(given, n)
    if method is not None:
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-n // -(-num_classes // in_features))
        size = min((1 << (target - 1).bit_length()) // factor, n)
        if given is not None and given != size:
            raise ValueError(f"batch_chunk_size (={given}) and chunking_method ('{method}') give "
                             f"different chunk sizes ({given} vs {size}); pass only one.")
    return max(1, size)


def acc_dtype(options, dtype):
    """The accumulation dtype: the options' own, else float32 for float16/bfloat16
    input under acc_policy='auto' (every dispatchtorch backend has that matmul), else
    the input's."""
    acc = getattr(options, "acc_dtype", None)
    if acc is None:
        auto = getattr(options, "acc_policy", "auto") == "auto" and dtype in _LOWP
        return D.float32 if auto else dtype
    if not isinstance(acc, D.dtype):
        raise TypeError(f"linear_cross_entropy: options.acc_dtype must be a dispatchtorch dtype, "
                        f"got {acc!r}")
    return acc


def _chunk_terms(x, w, b, t, cw, ignore_index, acc):
    """One chunk's per-row losses, d loss_row / d logits, and the rows' weights (0 where
    ignored)."""
    logits = x.to(acc) @ w.to(acc).t()
    if b is not None:
        logits = logits + b.to(acc)
    keep = t != ignore_index
    safe = _ops.where(keep, t, 0)
    rw = keep.to(acc) if cw is None else _ops.where(keep, cw.to(acc)[safe], 0.0)
    lse = _ops.logsumexp(logits, 1, keepdim=True)
    picked = logits.gather(1, safe.unsqueeze(1))
    loss = (lse - picked).squeeze(1) * rw
    dlogits = (logits - lse).exp()
    dlogits = dlogits.scatter_add(1, safe.unsqueeze(1), -_ops.ones_like(picked))
    return loss, dlogits * rw.unsqueeze(1), rw


def _chunks(n, size):
    return [(s, min(s + size, n)) for s in range(0, n, size)]


class _ChunkedScalar(Function):
    """'mean' / 'sum': gradients precomputed chunk by chunk in forward."""

    @staticmethod
    def forward(ctx, x, w, t, b, cw, reduction, ignore_index, size, acc, keep_graph):
        n = x.shape[0]
        total = _ops.zeros((), dtype=acc, device=x.device)
        norm = _ops.zeros((), dtype=acc, device=x.device)
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], \
            ctx.needs_input_grad[3]
        gx = [] if need_x else None
        gw = _ops.zeros(tuple(w.shape), dtype=acc, device=w.device) if need_w else None
        gb = _ops.zeros(tuple(b.shape), dtype=acc, device=b.device) if need_b else None
        for s, e in _chunks(n, size):
            loss, dl, rw = _chunk_terms(x[s:e], w, b, t[s:e], cw, ignore_index, acc)
            total, norm = total + loss.sum(), norm + rw.sum()
            if need_x:
                gx.append(dl @ w.to(acc))
            if need_w:
                gw = gw + dl.t() @ x[s:e].to(acc)
            if need_b:
                gb = gb + dl.sum(0)
        scale = 1.0 / norm if reduction == "mean" else _ops.ones((), dtype=acc, device=x.device)
        ctx.grads = (None if gx is None else _ops.cat(gx, 0), gw, gb)
        ctx.scale, ctx.dtypes, ctx.keep_graph = scale, (x.dtype, w.dtype), keep_graph
        return (total * scale).to(x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy (chunked): backward through the graph a "
                               "second time; pass LinearCrossEntropyOptions("
                               "allow_retain_graph=True) to keep its gradient buffers")
        gx, gw, gb = ctx.grads
        if not ctx.keep_graph:
            ctx.grads = None
        k = g.to(ctx.scale.dtype) * ctx.scale
        xd, wd = ctx.dtypes
        return (None if gx is None else (gx * k).to(xd), None if gw is None else (gw * k).to(wd),
                None, None if gb is None else (gb * k).to(wd), None, None, None, None, None, None)


class _ChunkedNone(Function):
    """reduction='none': the per-row losses; backward recomputes each chunk."""

    @staticmethod
    def forward(ctx, x, w, t, b, cw, ignore_index, size, acc):
        losses = [_chunk_terms(x[s:e], w, b, t[s:e], cw, ignore_index, acc)[0]
                  for s, e in _chunks(x.shape[0], size)]
        ctx.save_for_backward(x, w, t, b, cw)
        ctx.args = (ignore_index, size, acc)
        return _ops.cat(losses, 0).to(x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, w, t, b, cw = ctx.saved_tensors
        ignore_index, size, acc = ctx.args
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], \
            ctx.needs_input_grad[3]
        gx, gw, gb = [], None, None
        for s, e in _chunks(x.shape[0], size):
            _, dl, _ = _chunk_terms(x[s:e], w, b, t[s:e], cw, ignore_index, acc)
            dl = dl * g[s:e].to(acc).unsqueeze(1)
            if need_x:
                gx.append(dl @ w.to(acc))
            if need_w:
                part = dl.t() @ x[s:e].to(acc)
                gw = part if gw is None else gw + part
            if need_b:
                gb = dl.sum(0) if gb is None else gb + dl.sum(0)
        return (_ops.cat(gx, 0).to(x.dtype) if need_x else None,
                None if gw is None else gw.to(w.dtype), None,
                None if gb is None else gb.to(b.dtype), None, None, None, None)


def chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
            options):
    """The chunked loss of a validated call: 1-d or 2-d input, (C, in_features) weight,
    int64 class-index target, reduction 'mean' / 'sum' / 'none'."""
    batched = input.dim() == 2
    x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
    n, in_features = x.shape
    size = chunk_size(options, n, in_features, linear_weight.shape[0])
    acc = acc_dtype(options, x.dtype)
    if reduction == "none":
        r = _ChunkedNone.apply(x, linear_weight, t, linear_bias, weight, ignore_index, size, acc)
    else:
        r = _ChunkedScalar.apply(x, linear_weight, t, linear_bias, weight, reduction,
                                 ignore_index, size, acc,
                                 bool(getattr(options, "allow_retain_graph", False)))
    return r if batched or reduction != "none" else r.squeeze(0)
