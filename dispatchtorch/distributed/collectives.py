"""Tensor collectives as in torch.distributed: checks, staging to the engine's buffers,
and the Work that finishes them. Ranks given as `src`/`dst` are global ranks
(`group_src`/`group_dst`: ranks inside the group), as in PyTorch."""
from __future__ import annotations

import numpy as np

from .. import ops as _ops
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .group import resolve
from .reduce_op import ReduceOp, check as _check_op
from .work import Work

SUM = ReduceOp.SUM


# -- helpers ----------------------------------------------------------------------
def _tensor(t, what, arg):
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {arg} must be a Tensor, got {type(t).__name__}")
    return t


def _tensors(ts, what, arg):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"{what}: {arg} must be a list of Tensors, got {type(ts).__name__}")
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {arg}[{i}] must be a Tensor, got {type(t).__name__}")
    return ts


def _same(a, b, what, arg):
    if a.dtype != b.dtype:
        raise TypeError(f"{what}: {arg} has dtype {a.dtype}, expected {b.dtype} (as the input)")
    if a.device != b.device:
        raise RuntimeError(f"{what}: {arg} is on {a.device}, expected {b.device} (as the input)")


def _write(t, host):
    """Copy a host array into tensor t (any device, any layout)."""
    with no_grad():
        t.detach().copy_(_ops.from_numpy(np.ascontiguousarray(host)).reshape(t.shape))


def _stage(eng, t, read=True):
    """(buffer `eng` works on, write-back or None) for tensor t: its own memory when the
    engine can use it (a contiguous CPU tensor for MPI, a contiguous device tensor for a
    device engine), else a contiguous copy written back after the collective."""
    d = t.detach()
    if eng.buffers == "host":
        if t._place.type == "cpu":
            arr = d.numpy()
            if arr.flags.c_contiguous and arr.flags.writeable:
                return arr, None
        if read:
            arr = np.ascontiguousarray(d.cpu().numpy())
            if not arr.flags.writeable:
                arr = arr.copy()
        else:                          # an output only: no transfer in
            arr = np.empty(tuple(t.shape), dtype=t.dtype.np)
        return arr, (lambda: _write(t, arr))
    if t.is_contiguous():
        return d._h, None
    c = d.contiguous()

    def back():
        with no_grad():
            d.copy_(c)
    return c._h, back


def _issue(pending, what, pg, backs, async_op, outputs=()):
    w = Work(pending, what, pg, [b for b in backs if b is not None])
    w._outputs = outputs
    if async_op:
        return w
    w.wait()
    return None


def _root(pg, rank, group_rank, what, arg):
    """The group rank of a root given as a global rank or a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{what}: can only specify one of {arg} or group_{arg}")
    if rank is None and group_rank is None:
        raise ValueError(f"{what}: {arg} (a global rank) or group_{arg} must be provided")
    if group_rank is not None:
        if not isinstance(group_rank, int) or not 0 <= group_rank < pg.size():
            raise ValueError(f"{what}: group_{arg}={group_rank!r} is not a rank of the group "
                             f"(size {pg.size()})")
        return group_rank
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"{what}: {arg} must be an int rank, got {type(rank).__name__}")
    if pg.ranks == list(range(pg.size())) and not 0 <= rank < pg.size():
        raise RuntimeError(f"{what}: invalid root rank: {rank} (world size {pg.size()})")
    return pg.group_rank(rank, what)


# -- reductions ---------------------------------------------------------------------
def all_reduce(tensor, op=SUM, group=None, async_op=False):
    """tensor = op over every rank's tensor, in place."""
    pg = resolve(group, "all_reduce")
    if pg is None:
        return None
    _tensor(tensor, "all_reduce", "tensor")
    op = _check_op(op, "all_reduce")
    eng = pg.engine_for(tensor, "all_reduce")
    buf, back = _stage(eng, tensor)
    return _issue(eng.all_reduce(buf, op), "all_reduce", pg, [back], async_op, [tensor])


def reduce(tensor, dst=None, op=SUM, group=None, async_op=False, group_dst=None):
    """tensor on dst = op over every rank's tensor (other ranks' tensors unchanged)."""
    pg = resolve(group, "reduce")
    if pg is None:
        return None
    _tensor(tensor, "reduce", "tensor")
    op = _check_op(op, "reduce")
    root = _root(pg, dst, group_dst, "reduce", "dst")
    eng = pg.engine_for(tensor, "reduce")
    buf, back = _stage(eng, tensor)
    return _issue(eng.reduce(buf, op, root), "reduce", pg,
                  [back if pg.rank() == root else None], async_op, [tensor])


def reduce_scatter_tensor(output, input, op=SUM, group=None, async_op=False):
    """output = op over ranks of block `rank` of input (input: world_size * output elements)."""
    pg = resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    _tensor(output, "reduce_scatter_tensor", "output")
    _tensor(input, "reduce_scatter_tensor", "input")
    _same(output, input, "reduce_scatter_tensor", "output")
    op = _check_op(op, "reduce_scatter_tensor")
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements, expected "
                         f"world size {pg.size()} x output's {output.numel()}")
    eng = pg.engine_for(input, "reduce_scatter_tensor")
    ibuf, _ = _stage(eng, input)
    obuf, back = _stage(eng, output, read=False)
    return _issue(eng.reduce_scatter(obuf, ibuf, op), "reduce_scatter_tensor", pg, [back],
                  async_op, [output])


def reduce_scatter(output, input_list, op=SUM, group=None, async_op=False):
    """output = op over ranks of input_list[rank]."""
    pg = resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _tensor(output, "reduce_scatter", "output")
    _per_rank_list(input_list, output, pg, "reduce_scatter", "input_list")
    with no_grad():
        flat = _ops.stack([t.detach() for t in input_list])
    return reduce_scatter_tensor(output, flat, op, pg, async_op)


# -- data movement --------------------------------------------------------------------
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """tensor = src's tensor on every rank."""
    pg = resolve(group, "broadcast")
    if pg is None:
        return None
    _tensor(tensor, "broadcast", "tensor")
    root = _root(pg, src, group_src, "broadcast", "src")
    eng = pg.engine_for(tensor, "broadcast")
    buf, back = _stage(eng, tensor, read=pg.rank() == root)
    return _issue(eng.broadcast(buf, root), "broadcast", pg,
                  [back if pg.rank() != root else None], async_op, [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor = every rank's input_tensor, concatenated (or stacked) in rank order."""
    pg = resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    _same(output_tensor, input_tensor, "all_gather_into_tensor", "output_tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output_tensor has {output_tensor.numel()} "
                         f"elements, expected world size {pg.size()} x input_tensor's "
                         f"{input_tensor.numel()}")
    eng = pg.engine_for(input_tensor, "all_gather_into_tensor")
    ibuf, _ = _stage(eng, input_tensor)
    obuf, back = _stage(eng, output_tensor, read=False)
    return _issue(eng.all_gather(obuf, ibuf), "all_gather_into_tensor", pg, [back], async_op,
                  [output_tensor])


def _check_len(lst, pg, what, arg):
    if len(lst) != pg.size():
        raise ValueError(f"{what}: {arg} has {len(lst)} tensors, expected one per rank "
                         f"({pg.size()})")


def _per_rank_list(lst, ref, pg, what, arg):
    """One tensor per rank, each of ref's dtype, device and shape."""
    _tensors(lst, what, arg)
    _check_len(lst, pg, what, arg)
    for i, t in enumerate(lst):
        _same(t, ref, what, f"{arg}[{i}]")
        _shape(t, ref, what, f"{arg}[{i}]")


def _shape(t, ref, what, arg):
    if tuple(t.shape) != tuple(ref.shape):
        raise ValueError(f"{what}: {arg} has shape {tuple(t.shape)}, expected "
                         f"{tuple(ref.shape)}")


def _copy_out(flat, tensors):
    def back():
        with no_grad():
            for i, t in enumerate(tensors):
                t.detach().copy_(flat[i].reshape(t.shape))
    return back


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] = rank i's tensor."""
    pg = resolve(group, "all_gather")
    if pg is None:
        return None
    _tensor(tensor, "all_gather", "tensor")
    _per_rank_list(tensor_list, tensor, pg, "all_gather", "tensor_list")
    flat = _ops.empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    w = all_gather_into_tensor(flat, tensor, pg, async_op=True)
    w._after = list(w._after) + [_copy_out(flat, tensor_list)]
    w._outputs = list(tensor_list)
    return _finish(w, async_op)


def _finish(w, async_op):
    if async_op:
        return w
    w.wait()
    return None


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather_list[i] on dst = rank i's tensor."""
    pg = resolve(group, "gather")
    if pg is None:
        return None
    _tensor(tensor, "gather", "tensor")
    root = _root(pg, dst, group_dst, "gather", "dst")
    me = pg.rank() == root
    if me:
        if gather_list is None:
            raise ValueError("gather: Argument ``gather_list`` must be specified on "
                             "destination rank.")
        _per_rank_list(gather_list, tensor, pg, "gather", "gather_list")
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    eng = pg.engine_for(tensor, "gather")
    ibuf, _ = _stage(eng, tensor)
    backs, obuf = [], None
    if me:
        flat = _ops.empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype,
                          device=tensor.device)
        obuf, back = _stage(eng, flat, read=False)
        backs = [back, _copy_out(flat, gather_list)]
    return _issue(eng.gather(obuf, ibuf, root), "gather", pg, backs, async_op,
                  list(gather_list) if me else [tensor])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """tensor = src's scatter_list[rank]."""
    pg = resolve(group, "scatter")
    if pg is None:
        return None
    _tensor(tensor, "scatter", "tensor")
    root = _root(pg, src, group_src, "scatter", "src")
    me = pg.rank() == root
    eng = pg.engine_for(tensor, "scatter")
    ibuf = None
    if me:
        if scatter_list is None:
            raise ValueError("scatter: Argument ``scatter_list`` must be specified on source rank.")
        _per_rank_list(scatter_list, tensor, pg, "scatter", "scatter_list")
        with no_grad():
            flat = _ops.stack([t.detach() for t in scatter_list])
        ibuf, _ = _stage(eng, flat)
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on "
                         "non-source ranks.")
    obuf, back = _stage(eng, tensor, read=False)
    return _issue(eng.scatter(obuf, ibuf, root), "scatter", pg, [back], async_op, [tensor])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Rank j receives block j of every rank's input (blocks along dim 0)."""
    pg = resolve(group, "all_to_all_single")
    if pg is None:
        return None
    _tensor(output, "all_to_all_single", "output")
    _tensor(input, "all_to_all_single", "input")
    _same(output, input, "all_to_all_single", "output")
    n = pg.size()
    ins = _splits(input, input_split_sizes, n, "input_split_sizes")
    outs = _splits(output, output_split_sizes, n, "output_split_sizes")
    eng = pg.engine_for(input, "all_to_all_single")
    ibuf, _ = _stage(eng, input)
    obuf, back = _stage(eng, output, read=False)
    return _issue(eng.all_to_all(obuf, outs, ibuf, ins), "all_to_all_single", pg, [back],
                  async_op, [output])


def _splits(t, sizes, n, arg):
    """Element counts of the n blocks of t along dim 0."""
    rows = t.shape[0] if t.dim() else 1
    row = t.numel() // rows if rows else 0
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single: dim 0 ({rows}) must divide by the world size "
                             f"({n}) when {arg} is not given")
        return [rows // n * row] * n
    sizes = list(sizes)
    if len(sizes) != n or sum(sizes) != rows:
        raise ValueError(f"all_to_all_single: {arg}={sizes} must have {n} entries summing to "
                         f"dim 0 ({rows})")
    return [s * row for s in sizes]


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """output_tensor_list[i] = rank i's input_tensor_list[rank]."""
    pg = resolve(group, "all_to_all")
    if pg is None:
        return None
    _tensors(output_tensor_list, "all_to_all", "output_tensor_list")
    _tensors(input_tensor_list, "all_to_all", "input_tensor_list")
    _check_len(output_tensor_list, pg, "all_to_all", "output_tensor_list")
    _check_len(input_tensor_list, pg, "all_to_all", "input_tensor_list")
    ref = input_tensor_list[0]
    for name, lst in (("input_tensor_list", input_tensor_list),
                      ("output_tensor_list", output_tensor_list)):
        for i, t in enumerate(lst):
            _same(t, ref, "all_to_all", f"{name}[{i}]")
    with no_grad():
        flat_in = _ops.cat([t.detach().reshape(-1) for t in input_tensor_list])
    flat_out = _ops.empty((sum(t.numel() for t in output_tensor_list),), dtype=ref.dtype,
                          device=ref.device)
    eng = pg.engine_for(ref, "all_to_all")
    ibuf, _ = _stage(eng, flat_in)
    obuf, back = _stage(eng, flat_out, read=False)
    counts_out = [t.numel() for t in output_tensor_list]

    def split_out():
        with no_grad():
            at = 0
            for t, c in zip(output_tensor_list, counts_out):
                t.detach().copy_(flat_out[at:at + c].reshape(t.shape))
                at += c
    p = eng.all_to_all(obuf, counts_out, ibuf, [t.numel() for t in input_tensor_list])
    return _issue(p, "all_to_all", pg, [back, split_out], async_op, list(output_tensor_list))


# -- point to point ----------------------------------------------------------------------
def _peer(pg, rank, group_rank, what, arg):
    if rank is None and group_rank is None:
        raise ValueError(f"{what}: {arg} (a global rank) or group_{arg} must be provided")
    peer = _root(pg, rank, group_rank, what, arg)
    if peer == pg.rank():
        kind = "destination" if arg == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         f"of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg = resolve(group, "isend")
    if pg is None:
        return None
    _tensor(tensor, "isend", "tensor")
    peer = _peer(pg, dst, group_dst, "isend", "dst")
    eng = pg.engine_for(tensor, "isend")
    buf, _ = _stage(eng, tensor)
    return Work(eng.send(buf, peer, tag), "send", pg)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send tensor to rank dst (blocks until the buffer can be reused)."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    pg = resolve(group, "irecv")
    if pg is None:
        return None
    _tensor(tensor, "irecv", "tensor")
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "irecv", "src")
    eng = pg.engine_for(tensor, "irecv")
    buf, back = _stage(eng, tensor, read=False)
    w = Work(eng.recv(buf, peer, tag), "recv", pg, [back] if back else ())
    w._source = peer               # MPI's status replaces it for a receive from any rank
    return w


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into tensor from src (any rank when None); returns the sender's global rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._group.ranks[w._source]


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group reached this call."""
    pg = resolve(group, "barrier")
    if pg is None:
        return None
    w = Work(pg.host.barrier(), "barrier", pg)
    if async_op:
        return w
    w.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier bounded by `timeout`: past it the watchdog ends the job naming the
    barrier (PyTorch's raises on rank 0 naming the missing ranks instead)."""
    return barrier(group, timeout=timeout)
