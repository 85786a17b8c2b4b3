"""DistributedDataParallel's gradient reducer: parameters grouped in buckets (PyTorch's
layout: see Reducer, rebuilt once in the order backward produced them); each bucket's
all-reduce is launched asynchronously, from the gradient hooks, as soon as all its
gradients are in, in bucket order on every rank (MPI needs one collective order);
the end-of-backward callback waits for them and writes the averages into `.grad`.
With a communication hook (`register_comm_hook`) the hook replaces the all-reduce: it gets
the bucket as a GradBucket and its Future's tensor is what lands in `.grad`."""
from __future__ import annotations

from ... import distributed as dist
from ... import ops as _ops
from ..._dtype import int64
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import no_grad
from ._comm_hook_run import hook_result, run_hook

# PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES: a small first bucket starts communication early
FIRST_BUCKET_BYTES = 1024 * 1024
NO_LIMIT = float("inf")


class _Bucket:
    __slots__ = ("params", "offsets", "flat", "slots", "pending", "work", "fut", "index")

    def __init__(self, index, params):
        self.index, self.params = index, params
        self.offsets, at = [], 0
        for p in params:
            self.offsets.append(at)
            at += p.numel()
        p0 = params[0]
        self.flat = _ops.zeros((at,), dtype=p0.dtype, device=p0.device)
        self.slots = [self.flat[o:o + p.numel()].view(p.shape)
                      for o, p in zip(self.offsets, params)]
        self.pending = len(params)
        self.work = self.fut = None


def assign_buckets(params, limits, ready_order=False):
    """PyTorch's compute_bucket_assignment_by_size: per dtype and device, parameters join an
    open bucket that closes once it holds `limits[k]` bytes or more (k advances to the last
    limit). Buckets in ready order stay in the order they closed; otherwise they are sorted
    by their first parameter's position (the caller reverses them: backward runs last
    layers first)."""
    out, open_, at = [], {}, {}
    for pos, p in enumerate(params):
        key = (p.dtype, p.device)
        cur = open_.setdefault(key, [[], 0])
        cur[0].append(pos)
        cur[1] += p.numel() * p.element_size()
        k = at.setdefault(key, 0)
        if cur[1] >= limits[k]:
            out.append(cur[0])
            open_[key] = [[], 0]
            at[key] = min(k + 1, len(limits) - 1)
    out += [b for b, _ in open_.values() if b]
    if not ready_order:
        out.sort(key=min)
    return [[params[i] for i in b] for b in out]


class Reducer:
    """Buckets as PyTorch 2.13 lays them out: the first backward (unless
    find_unused_parameters) reduces one bucket of every parameter, recording the order the
    gradients arrive in; the next forward rebuilds the buckets in that order (rank 0's,
    broadcast), the first of `first_bytes`, then `cap_bytes` each, so later backwards
    overlap communication with computation."""

    def __init__(self, named_params, group, cap_bytes, first_bytes, find_unused, grad_as_view,
                 static_graph=False):
        self.names = {id(p): n for n, p in named_params}
        self.params = [p for _, p in named_params]
        self.position = {id(p): i for i, p in enumerate(self.params)}
        self.group, self.find_unused, self.grad_as_view = group, find_unused, grad_as_view
        self.world = dist.get_world_size(group)
        self.divisor = self.world            # Join(divide_by_initial_world_size=False) lowers it
        self.rebuild_limits = [first_bytes, cap_bytes]
        if static_graph or not find_unused:
            limits = [NO_LIMIT]
        else:
            limits = [first_bytes, cap_bytes] if first_bytes < cap_bytes else [cap_bytes]
        # buckets are rebuilt once, from the order of the first synchronised backward (the
        # second with static_graph: PyTorch's first static-graph iteration records nothing)
        self.arrivals = [] if (static_graph or not find_unused) else None
        self.unrecorded = 1 if static_graph else 0
        self._set_buckets(assign_buckets(self.params, limits)[::-1])
        self.armed = False          # the forward of this step asked for a synchronised backward
        self.in_backward = False
        self.next_launch = 0
        self.ready = set()
        self.hook = self.hook_state = None     # a communication hook and its state
        self.handles = [p.register_hook(self._hook_for(p)) for p in self.params]

    def _set_buckets(self, layout):
        self.buckets = [_Bucket(i, ps) for i, ps in enumerate(layout)]
        self.where = {}
        for b in self.buckets:
            for j, p in enumerate(b.params):
                self.where[id(p)] = (b, j)

    def prepare(self):
        """Called by forward with grad sync on: the next backward all-reduces."""
        self.armed = True

    def rebuild_buckets(self):
        """Once, at the forward after the first synchronised backward (PyTorch's
        `_rebuild_buckets`): every rank takes rank 0's gradient arrival order. True if it
        rebuilt."""
        order = self.arrivals
        if not order:
            return False
        self.arrivals = None
        if len(order) != len(self.params):
            raise RuntimeError(f"DistributedDataParallel: rebuilding buckets needs every "
                               f"parameter's gradient order; {len(order)} of "
                               f"{len(self.params)} arrived")
        agreed = _ops.tensor(order, dtype=int64, device="cpu")
        if self.world > 1:
            src = dist.get_global_rank(self.group, 0) if self.group is not None else 0
            dist.broadcast(agreed, src=src, group=self.group)
        old = self.where
        self._set_buckets(assign_buckets([self.params[i] for i in agreed.tolist()],
                                         self.rebuild_limits, ready_order=True))
        if self.grad_as_view:       # .grad keeps being a view of its (new) bucket
            with no_grad():
                for p in self.params:
                    b, j = self.where[id(p)]
                    if p.grad is not None and p.grad is old[id(p)][0].slots[old[id(p)][1]]:
                        b.slots[j].copy_(p.grad)
                        p.grad = b.slots[j]
        return True

    def _hook_for(self, p):
        key = id(p)

        def hook(grad):
            if not self.armed:
                return None
            return self._ready(p, key, grad)
        return hook

    def _ready(self, p, key, grad):
        if not self.in_backward:
            self.in_backward = True
            queue_callback(self._finalize)
        b, j = self.where[key]
        slot = b.slots[j]
        with no_grad():
            if p.grad is None:
                slot.copy_(grad)
            elif p.grad is slot:               # gradient_as_bucket_view: .grad is the bucket
                slot.add_(grad)
                # the engine then stores grad in a fresh .grad instead of adding into the
                # bucket, which may be in flight once this hook returns; finalize re-points it
                p.grad = None
            else:
                slot.copy_(p.grad + grad)
        self.ready.add(key)
        if self.arrivals is not None and not self.unrecorded:
            self.arrivals.append(self.position[key])
        b.pending -= 1
        self._progress()
        self._launch_ready()
        return None

    def _progress(self):
        """Test the buckets in flight: MPI moves a nonblocking collective's data only inside
        MPI calls (without an asynchronous progress thread), so each gradient hook gives
        the earlier buckets' all-reduces a turn while backward goes on."""
        for b in self.buckets[:self.next_launch]:
            if b.work is not None:
                b.work.is_completed()           # finishes at once when already done

    def _launch_ready(self):
        bs = self.buckets
        while self.next_launch < len(bs) and bs[self.next_launch].pending == 0:
            b = bs[self.next_launch]
            if self.hook is None:
                b.work = dist.all_reduce(b.flat, group=self.group, async_op=True)
            else:
                # not polled during backward: callbacks that launch collectives then run
                # at the end of backward, in bucket order on every rank
                try:
                    b.fut = run_hook(self.hook, self.hook_state, b.index, b.flat, b.slots,
                                     b.params, len(bs))
                except Exception:
                    self._abandon()      # backward stops here: the next one starts clean
                    raise
            self.next_launch += 1

    def _finalize(self):
        """End of backward: reduce what is left, wait, write the averages into .grad."""
        missing = [p for p in self.params if id(p) not in self.ready]
        if missing and not self.find_unused:
            self._reset_waiting()
            names = ", ".join(self.names[id(p)] for p in missing)
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting "
                "a new one. This error indicates that your module has parameters that were "
                "not used in producing loss. You can enable unused parameter detection by "
                "passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`. Parameters that did not "
                f"receive grad: {names}")
        used = None
        if self.find_unused:
            with no_grad():
                for p in missing:
                    b, j = self.where[id(p)]
                    if p.grad is None:
                        b.slots[j].zero_()
                    elif p.grad is not b.slots[j]:
                        b.slots[j].copy_(p.grad)
                    b.pending -= 1
            self._launch_ready()
            # after every bucket, on every rank (one collective order, whoever missed what)
            used = _ops.tensor([1 if id(p) in self.ready else 0 for p in self.params],
                               device=self.params[0].device)    # the engine of the grads
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.group)
            used = used.tolist()
        try:
            self._write_grads(used)
        except Exception:
            self._abandon()
            raise
        self.unrecorded = 0                 # the next synchronised backward records its order
        self._reset()

    def _write_grads(self, used):
        with no_grad():
            for b in self.buckets:
                if b.fut is not None:
                    hook_result(b)                  # the hook did its own averaging
                else:
                    b.work.wait()
                    b.flat.div_(self.divisor)
                for j, p in enumerate(b.params):
                    if used is not None and not used[self.position[id(p)]]:
                        continue
                    slot = b.slots[j]
                    if self.grad_as_view:
                        if p.grad is not slot:
                            p.grad = slot
                    elif p.grad is None:
                        p.grad = slot.clone()
                    else:
                        p.grad.copy_(slot)

    def _forget_arrivals(self):
        """A backward that failed gives no order to rebuild from; the next one will."""
        if self.arrivals is not None:
            self.arrivals.clear()

    def _reset_waiting(self):
        self._forget_arrivals()
        for b in self.buckets[:self.next_launch]:
            (b.fut if b.fut is not None else b.work).wait()
        self._reset()

    def _abandon(self):
        """After a hook failed: finish what is in flight (ignoring its errors), reset."""
        self._forget_arrivals()
        for b in self.buckets[:self.next_launch]:
            try:
                (b.fut if b.fut is not None else b.work).wait()
            except Exception:           # noqa: BLE001  (the first error is the one raised)
                pass
        self._reset()

    def _reset(self):
        for b in self.buckets:
            b.pending, b.work, b.fut = len(b.params), None, None
        self.ready.clear()
        self.next_launch = 0
        self.in_backward = False
        self.armed = False

    def shadow_backward(self):
        """A joined rank's side of one backward: every bucket's reduction (the hook, or an
        all-reduce) of zeros, in bucket order, then the used map, as _finalize runs them."""
        pending = []
        for b in self.buckets:
            with no_grad():
                zeros = _ops.zeros_like(b.flat)
            if self.hook is None:
                pending.append(dist.all_reduce(zeros, group=self.group, async_op=True))
            else:
                slots = [zeros[o:o + p.numel()].view(p.shape) for o, p in zip(b.offsets, b.params)]
                pending.append(run_hook(self.hook, self.hook_state, b.index, zeros, slots,
                                        b.params, len(self.buckets)))
        if self.find_unused:
            dist.all_reduce(_ops.zeros((len(self.params),), dtype=int64,
                                       device=self.params[0].device),
                            op=dist.ReduceOp.MAX, group=self.group)
        for w in pending:
            w.wait()

    def remove(self):
        for h in self.handles:
            h.remove()
