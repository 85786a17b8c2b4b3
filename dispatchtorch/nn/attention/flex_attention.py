"""torch.nn.attention.flex_attention: attention with a user's score_mod and mask_mod,
computed as PyTorch's eager (unfused) path computes it.

PyTorch's eager flex_attention runs its math reference: scores in float32 (float64 for
float64 inputs), `where(mask_mod(b, h, q, kv), score_mod(score, b, h, q, kv), -inf)`
with both functions vmapped over the four index dims, a softmax that gives 0 on a
fully masked row, then `@ value` in the input dtype. Here the index tensors are
arange's shaped to broadcast ((B,1,1,1), (1,H,1,1), (1,1,L,1), (1,1,1,S)) instead of
vmapped: a function vmap can batch (elementwise arithmetic, comparisons, `where`,
indexing a captured tensor with the indices) gives the same values from broadcasting,
and every backend runs it as ordinary ops (dispatchtorch.compile fuses them).

A BlockMask carries the block tables PyTorch's fused kernels use (the same counts,
orders and dtypes as create_block_mask's); the eager computation, PyTorch's and this,
applies its mask_mod to every position.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_warned = set()
FlexKernelOptions = dict          # PyTorch's TypedDict of Triton options: ignored when eager


@dataclass(frozen=True)
class AuxRequest:
    """Which auxiliary outputs flex_attention returns beside the output."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    lse: Tensor | None = None
    max_scores: Tensor | None = None


def _warn_once(key, message, category=UserWarning):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, category, stacklevel=3)


def noop_mask(batch, head, token_q, token_kv):
    """Attend everywhere."""
    return _ops.ones((), dtype=D.bool_, device=batch.device)


def _identity(score, batch, head, token_q, token_kv):
    return score


def and_masks(*mask_mods):
    """A mask_mod true where every one of mask_mods is."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = _ops.ones((), dtype=D.bool_, device=b.device)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result
    return and_mask


def or_masks(*mask_mods):
    """A mask_mod true where any one of mask_mods is."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = _ops.zeros((), dtype=D.bool_, device=b.device)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result
    return or_mask


def _indices(B, H, L, S, device):
    """The batch, head, query and key index tensors, shaped to broadcast to (B, H, L, S)."""
    def ar(n, at):
        shape = [1, 1, 1, 1]
        shape[at] = n
        return _ops.arange(n, device=device).reshape(shape)
    return ar(B, 0), ar(H, 1), ar(L, 2), ar(S, 3)


def _dense_mask(mask_mod, B, H, L, S, device):
    """mask_mod at every (b, h, q, kv) as a (B, H, L, S) bool tensor."""
    m = mask_mod(*_indices(B, H, L, S, device))
    return _ops.broadcast_to(m.to(D.bool_), (B, H, L, S))


def _positional(fn):
    """How many positional arguments without defaults fn takes (4: a mask_mod, 5: a
    score_mod), as PyTorch's _get_mod_type counts them."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    import inspect
    return sum(1 for p in inspect.signature(fn).parameters.values()
               if p.default is inspect.Parameter.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) bool mask of a mask_mod, or of a score_mod (where
    it leaves a zero score finite), as PyTorch's create_mask."""
    B, H = B or 1, H or 1
    if _positional(mod_fn) == 5:
        zero = _ops.zeros((B, H, Q_LEN, KV_LEN), device=device)
        out = mod_fn(zero, *_indices(B, H, Q_LEN, KV_LEN, device))
        return ~_ops.broadcast_to(_ops.isneginf(out), (B, H, Q_LEN, KV_LEN))
    return _dense_mask(mod_fn, B, H, Q_LEN, KV_LEN, device)


def _ordered(blocks):
    """(counts, indices) of a (B, H, rows, cols) 0/1 block table: the set blocks first,
    in increasing order, then the others (PyTorch's stable descending argsort), int32."""
    counts = blocks.sum(-1).to(D.int32)
    order = _ops.argsort(blocks.to(D.int32), dim=-1, descending=True, stable=True)
    return counts, order.to(D.int32)


def _listed(counts, indices):
    """The (B, H, rows, cols) bool table whose row r holds the first counts[r] of its
    indices: the inverse of _ordered."""
    n = indices.shape[-1]
    first = _ops.arange(n, device=indices.device) < counts.unsqueeze(-1).to(D.int64)
    return _ops.zeros(indices.shape, dtype=D.bool_, device=indices.device).scatter(
        -1, indices.to(D.int64), first)


def _cropped(counts, indices, rows, cols):
    """PyTorch's _adjust_num_blocks_and_indices: the first rows x cols of a table."""
    indices = indices[:, :, :rows, :cols]
    counts = _ops.clamp(counts[:, :, :rows], max=cols)
    return (indices < counts.unsqueeze(-1)).sum(-1).to(D.int32), indices


class BlockMask:
    """A block-sparse mask: per (batch, head, query block), which key blocks are partial
    (mask_mod decides inside) and which are full, and the same seen from key blocks."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE, mask_mod):
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True):
        """A BlockMask from its key-block tables; the query-block tables are their
        transposes (as PyTorch's). The eager computation uses only mask_mod."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise RuntimeError("full_kv_num_blocks and full_kv_indices must be both provided "
                               "or omitted")
        bs = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * bs[0], kv_indices.shape[-1] * bs[1])
        q = _ordered(_listed(kv_num_blocks, kv_indices).transpose(-1, -2)) \
            if compute_q_blocks else (None, None)
        fq = (None, None)
        if full_kv_num_blocks is not None and compute_q_blocks:
            fq = _ordered(_listed(full_kv_num_blocks, full_kv_indices).transpose(-1, -2))
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   *q, *fq, bs, noop_mask if mask_mod is None else mask_mod)

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped to its top-left (new_q_len, new_kv_len) corner (PyTorch's
        _adjust: only right for mask_mods that do not depend on the lengths)."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        kv = _cropped(self.kv_num_blocks, self.kv_indices, rows, cols)
        full = (None, None) if self.full_kv_num_blocks is None else \
            _cropped(self.full_kv_num_blocks, self.full_kv_indices, rows, cols)
        return BlockMask.from_kv_blocks(*kv, *full, BLOCK_SIZE=self.BLOCK_SIZE,
                                        mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
                                        compute_q_blocks=self.q_indices is not None)

    @property
    def shape(self):
        return (*self.kv_num_blocks.shape[:2], *self.seq_lengths)

    def numel(self):
        return math.prod(self.shape)

    def to_dense(self):
        """(B, H, query blocks, key blocks) int32: 1 where a block is computed."""
        dense = _listed(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _listed(self.full_kv_num_blocks, self.full_kv_indices)
        return dense.to(D.int32)

    def sparsity(self):
        """Percent of the attention matrix no listed block covers, as PyTorch counts it
        (partial and full lists added; negative when blocks padded past the sequence
        ends cover more than the matrix)."""
        blocks = int(self.kv_num_blocks.sum().item())
        if self.full_kv_num_blocks is not None:
            blocks += int(self.full_kv_num_blocks.sum().item())
        return 100 * (1 - blocks * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to(self, device):
        moved = {k: None if getattr(self, k) is None else getattr(self, k).to(device)
                 for k in _TABLES}
        return BlockMask(self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod)

    def as_tuple(self):
        return (*self.seq_lengths, *(getattr(self, k) for k in _TABLES), self.BLOCK_SIZE,
                self.mask_mod)

    def __repr__(self):
        tables = "".join(f"    {k}={self._size(getattr(self, k))},\n" for k in _TABLES
                         if getattr(self, k) is not None)
        name = getattr(self.mask_mod, "__name__", repr(self.mask_mod))
        return (f"BlockMask(\n{tables}    BLOCK_SIZE={self.BLOCK_SIZE},\n    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    @staticmethod
    def _size(t):
        return "torch.Size([" + ", ".join(str(n) for n in t.shape) + "])"


_TABLES = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
           "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The BlockMask of mask_mod over (B or 1, H or 1, Q_LEN, KV_LEN): mask_mod evaluated
    everywhere (positions past the ends of the blocks count as masked), then each
    BLOCK_SIZE block classified as full, partial or empty."""
    B, H = B or 1, H or 1
    bq, bkv = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    nq, nkv = -(-Q_LEN // bq), -(-KV_LEN // bkv)
    dense = _dense_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    padded = _ops.zeros((B, H, nq * bq, nkv * bkv), dtype=D.bool_, device=dense.device)
    padded[:, :, :Q_LEN, :KV_LEN] = dense
    blocks = padded.reshape(B, H, nq, bq, nkv, bkv)
    any_set = blocks.any(5).any(3)
    full = blocks.all(5).all(3) if separate_full_blocks else _ops.zeros_like(any_set)
    partial = any_set & ~full
    kv_num, kv_idx = _ordered(partial)
    fkv_num, fkv_idx = _ordered(full)
    q_num, q_idx = _ordered(partial.transpose(-1, -2))
    fq_num, fq_idx = _ordered(full.transpose(-1, -2))
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, fkv_num, fkv_idx, q_num, q_idx, fq_num,
                     fq_idx, (bq, bkv), mask_mod)


def _check(query, key, value, enable_gqa, block_mask):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"flex_attention(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got "
                         f"query.dtype: {query.dtype}, key.dtype: {key.dtype}, and value.dtype: "
                         f"{value.dtype} instead.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got "
                         f"query.device: {query.device}, key.device: {key.device}, and "
                         f"value.device: {value.device} instead.")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but "
                         f"got E={query.shape[-1]} and E={key.shape[-1]}.")
    hq, hkv = query.shape[1], key.shape[1]
    if not enable_gqa and hq != hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={hq} and Hkv={hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and hq % hkv:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but "
                         f"got Hq={hq} and Hkv={hkv}.")
    bq, bkv = query.shape[0], key.shape[0]
    if bq != bkv:
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none "
                             f"block_mask, but got block_mask=None, Bq={bq}, and Bkv={bkv}.")
        if block_mask.kv_num_blocks.shape[0] != bq:
            raise ValueError(f"Expect query and key/value to have the same batch size, or "
                             f"block_mask and query to have the same batch size, but got "
                             f"Bq={bq}, Bkv={bkv}, B_block_mask={block_mask.kv_num_blocks.shape[0]}.")
        if bkv != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={bq} and Bkv={bkv}")
    if block_mask is not None:
        ql, kl = block_mask.seq_lengths
        if query.shape[-2] != ql or key.shape[-2] != kl:
            bigger = query.shape[-2] > ql or key.shape[-2] > kl
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={query.shape[-2]} and kv_len={key.shape[-2]}. "
                + ("As the block mask was created for a smaller length than you're using it for, "
                   "you likely need to create a new block mask." if bigger else
                   "As the block mask was created for a larger length than you're using it for, "
                   "you can either 1. create a new block mask with the correct length, or 2. "
                   "'adjust' the existing block mask to the correct length by calling "
                   "block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to "
                   "the upper left corner, which does not work for all mask_mods!"))


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(where(mask_mod, score_mod(q @ k^T * scale), -inf)) @ v, on (B, H, L, E)."""
    _check(query, key, value, enable_gqa, block_mask)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in "
                   "v2.10. Please use return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    _warn_once("flex_attention_performance",
               "flex_attention called without torch.compile() - this will use an unfused "
               "implementation that materializes the full scores matrix instead of generating "
               "a fused kernel.")
    score_mod = _identity if score_mod is None else score_mod
    mask_mod = noop_mask if block_mask is None else block_mask.mask_mod
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    group = query.shape[1] // key.shape[1]
    if group > 1:
        key = key.repeat_interleave(group, dim=1)
        value = value.repeat_interleave(group, dim=1)
    B, H, L, S = query.shape[0], query.shape[1], query.shape[2], key.shape[2]
    key = key.expand(B, *key.shape[1:])
    value = value.expand(B, *value.shape[1:])
    work = D.float64 if query.dtype is D.float64 else D.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    idx = _indices(B, H, L, S, query.device)
    keep = _ops.broadcast_to(mask_mod(*idx).to(D.bool_), (B, H, L, S))
    modded = _ops.broadcast_to(score_mod(scores, *idx).to(work), (B, H, L, S))
    post = _ops.where(keep, modded, float("-inf"))
    empty = (post == float("-inf")).all(-1, keepdim=True)     # fully masked rows
    safe = _ops.where(empty, 0.0, post)                       # no NaN, forward or backward
    probs = _ops.where(empty, 0.0, safe.softmax(-1))
    out = probs.to(query.dtype) @ value.to(query.dtype)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    lse = _ops.where(empty.squeeze(-1), float("-inf"), safe.logsumexp(-1)) if want_lse else None
    top = post.amax(-1) if want_max else None
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=top)
    return (out, lse) if return_lse else out
