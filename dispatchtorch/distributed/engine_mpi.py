"""The MPI engine: collectives on host (numpy) buffers over an mpi4py communicator.

Every backend's tensors can use it: the collectives layer hands it the tensor's own
memory when that is a contiguous numpy array (the CPU backend: zero-copy) and a host
copy otherwise. Every call is nonblocking (MPI-3 `I*` calls); it returns a `Pending`
whose requests the caller waits on. Non-reducing calls move bytes, so any dtype works;
reductions use MPI's types, widening float16/bfloat16 to float32 on the way. Reduction
ops arrive by name ("sum", "avg", "product", "min", "max", "band", "bor", "bxor")."""
from __future__ import annotations

import numpy as np

from ._mpi import mpi

_WIDEN = {"float16", "bfloat16"}


class Pending:
    """MPI requests in flight and what to do once they finish (in order)."""
    __slots__ = ("requests", "finish", "status")

    def __init__(self, requests, finish=None, status=None):
        self.requests, self.finish, self.status = requests, finish, status


def _bytes(a):
    return a.reshape(-1).view(np.uint8)


class MPIEngine:
    """One communicator's collectives; `buffers = "host"` tells the caller to stage."""
    buffers = "host"
    name = "mpi"

    def __init__(self, comm):
        MPI = mpi()
        self.MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self._ops = {"sum": MPI.SUM, "avg": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN,
                     "max": MPI.MAX, "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR}
        self._bool_ops = {"sum": MPI.LOR, "max": MPI.LOR, "bor": MPI.LOR, "avg": MPI.LOR,
                          "min": MPI.LAND, "product": MPI.LAND, "band": MPI.LAND,
                          "bxor": MPI.LXOR}

    # -- reductions ----------------------------------------------------------------
    def _wire(self, arr, op):
        """(buffer MPI can reduce, MPI op, finish) for arr, reduced in place."""
        kind = arr.dtype.name
        if kind == "bool":
            return arr.reshape(-1).view(np.uint8), self._bool_ops[op], None
        if op in ("band", "bor", "bxor") and arr.dtype.kind == "f":
            raise RuntimeError(f"ReduceOp.{op.upper()} applies to integer and bool tensors, "
                               f"got {kind}")
        widened = kind in _WIDEN
        buf = arr.reshape(-1).astype(np.float32) if widened else arr.reshape(-1)
        n = self.size

        def finish():
            if op == "avg":
                if buf.dtype.kind == "f":
                    buf[...] /= n
                else:
                    np.floor_divide(buf, n, out=buf)
            if widened:
                arr.reshape(-1)[...] = buf.astype(arr.dtype)
        return buf, self._ops[op], finish if (op == "avg" or widened) else None

    def all_reduce(self, arr, op):
        buf, mop, finish = self._wire(arr, op)
        return Pending([self.comm.Iallreduce(self.MPI.IN_PLACE, buf, mop)], finish)

    def reduce(self, arr, op, root):
        buf, mop, finish = self._wire(arr, op)
        send = self.MPI.IN_PLACE if self.rank == root else buf
        req = self.comm.Ireduce(send, buf if self.rank == root else None, mop, root)
        return Pending([req], finish if self.rank == root else None)

    def reduce_scatter(self, out, inp, op):
        """out (n elements) = op over ranks of inp's block `rank` (inp: size*n elements)."""
        sbuf, mop, _ = self._wire(inp, op)
        rbuf, _, finish = self._wire(out, op)
        if sbuf.dtype != rbuf.dtype:
            raise RuntimeError("reduce_scatter: output and input dtypes differ")
        sbuf = np.ascontiguousarray(sbuf)   # a widened copy of the input must not alias it
        return Pending([self.comm.Ireduce_scatter_block(sbuf, rbuf, mop)], finish)

    # -- data movement (bytes) -----------------------------------------------------
    def broadcast(self, arr, root):
        return Pending([self.comm.Ibcast(_bytes(arr), root)])

    def all_gather(self, out, inp):
        """out (size*n elements) = every rank's inp, rank order."""
        return Pending([self.comm.Iallgather(_bytes(inp), _bytes(out))])

    def gather(self, out, inp, root):
        recv = _bytes(out) if self.rank == root else None
        return Pending([self.comm.Igather(_bytes(inp), recv, root)])

    def scatter(self, out, inp, root):
        send = _bytes(inp) if self.rank == root else None
        return Pending([self.comm.Iscatter(send, _bytes(out), root)])

    def all_to_all(self, out, out_counts, inp, in_counts):
        """Byte-wise all-to-all: block j of inp (in_counts[j] elements) goes to rank j."""
        isz, osz = inp.dtype.itemsize, out.dtype.itemsize
        sc = [c * isz for c in in_counts]
        rc = [c * osz for c in out_counts]
        sd, rd = _offsets(sc), _offsets(rc)
        B = self.MPI.BYTE
        return Pending([self.comm.Ialltoallv([_bytes(inp), sc, sd, B], [_bytes(out), rc, rd, B])])

    def send(self, arr, peer, tag):
        return Pending([self.comm.Isend(_bytes(arr), peer, tag)])

    def recv(self, arr, peer, tag):
        MPI = self.MPI
        src = MPI.ANY_SOURCE if peer is None else peer
        tag = MPI.ANY_TAG if tag is None else tag
        return Pending([self.comm.Irecv(_bytes(arr), src, tag)], status=MPI.Status())

    def barrier(self):
        return Pending([self.comm.Ibarrier()])


def _offsets(counts):
    out, acc = [], 0
    for c in counts:
        out.append(acc)
        acc += c
    return out
