"""The NCCL collectives engine (cupy.cuda.nccl) that this package brings to
dispatchtorch.distributed for CUDA tensors (Backend.collectives_engine).

It works on the handles themselves (cupy arrays): every call is queued on cupy's
current stream, after the kernels that produced its inputs and before the ones that
use its outputs; the returned pending object's wait() waits for an event recorded
after it. NCCL comes as libnccl from the `nvidia-nccl-cu12` wheel (this package's
`nccl` extra). The ranks swap NCCL's unique id over the MPI communicator they share."""
from __future__ import annotations

import numpy as np

from . import _bf16


def nccl_module():
    """cupy.cuda.nccl when libnccl loads, else None."""
    try:
        from cupy.cuda import nccl
    except Exception:
        return None
    return nccl if getattr(nccl, "available", False) and hasattr(nccl, "NcclCommunicator") \
        else None


class _Queued:
    """Work queued on a stream: done() polls, wait() blocks on the event after it."""
    __slots__ = ("event",)

    def __init__(self, cupy, stream):
        self.event = cupy.cuda.Event(disable_timing=True)
        self.event.record(stream)

    def done(self):
        return self.event.done

    def wait(self):
        self.event.synchronize()


class NCCLEngine:
    buffers = "device"          # the collectives layer hands it contiguous handles
    name = "nccl"

    def __init__(self, comm, device, cupy):
        nccl = nccl_module()
        if nccl is None:
            raise RuntimeError("process group backend 'nccl': libnccl did not load through "
                               "cupy.cuda.nccl; pip install 'dispatchtorch-cuda[nccl]' "
                               "(nvidia-nccl-cu12), or use backend='mpi'")
        self.cupy, self.nccl, self.device = cupy, nccl, device
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        uid = comm.bcast(nccl.get_unique_id() if self.rank == 0 else None, root=0)
        with cupy.cuda.Device(device):
            self.comm = nccl.NcclCommunicator(self.size, uid, self.rank)
        self._ops = {"sum": nccl.NCCL_SUM, "product": nccl.NCCL_PROD, "min": nccl.NCCL_MIN,
                     "max": nccl.NCCL_MAX}
        if hasattr(nccl, "NCCL_AVG"):
            self._ops["avg"] = nccl.NCCL_AVG
        self._types = {np.dtype(np.float32): nccl.NCCL_FLOAT32,
                       np.dtype(np.float64): nccl.NCCL_FLOAT64,
                       np.dtype(np.float16): nccl.NCCL_FLOAT16,
                       np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.int32): nccl.NCCL_INT32,
                       np.dtype(np.int8): nccl.NCCL_INT8, np.dtype(np.uint8): nccl.NCCL_UINT8,
                       np.dtype(np.bool_): nccl.NCCL_UINT8}
        if hasattr(nccl, "NCCL_BFLOAT16"):
            self._types[_bf16.STORAGE] = nccl.NCCL_BFLOAT16

    # -- helpers ------------------------------------------------------------------------
    def _stream(self):
        return self.cupy.cuda.get_current_stream()

    def _queued(self, stream):
        return _Queued(self.cupy, stream)

    def _reducing(self, h, op):
        """(NCCL dtype, NCCL op) for reducing handle h with op, or RuntimeError."""
        t = self._types.get(h.dtype)
        if h.dtype == np.bool_:            # logical or / and on the bytes
            op = {"sum": "max", "avg": "max", "product": "min"}.get(op, op)
        n = self._ops.get(op)
        if t is None or n is None:
            raise RuntimeError(f"nccl: cannot reduce {h.dtype} with ReduceOp.{op.upper()}")
        return t, n

    def _device(self):
        return self.cupy.cuda.Device(self.device)

    # -- the engine's methods (docs/distributed.md) -----------------------------------------
    def all_reduce(self, h, op):
        t, o = self._reducing(h, op)
        s = self._stream()
        with self._device():
            self.comm.allReduce(h.data.ptr, h.data.ptr, h.size, t, o, s.ptr)
        return self._queued(s)

    def reduce(self, h, op, root):
        t, o = self._reducing(h, op)
        s = self._stream()
        with self._device():
            self.comm.reduce(h.data.ptr, h.data.ptr, h.size, t, o, root, s.ptr)
        return self._queued(s)

    def reduce_scatter(self, out, inp, op):
        t, o = self._reducing(inp, op)
        s = self._stream()
        with self._device():
            self.comm.reduceScatter(inp.data.ptr, out.data.ptr, out.size, t, o, s.ptr)
        return self._queued(s)

    def broadcast(self, h, root):
        s = self._stream()
        with self._device():
            self.comm.broadcast(h.data.ptr, h.data.ptr, h.nbytes, self.nccl.NCCL_UINT8, root,
                                s.ptr)
        return self._queued(s)

    def all_gather(self, out, inp):
        s = self._stream()
        with self._device():
            self.comm.allGather(inp.data.ptr, out.data.ptr, inp.nbytes, self.nccl.NCCL_UINT8,
                                s.ptr)
        return self._queued(s)

    def _exchange(self, sends, recvs):
        """Grouped point-to-point: sends/recvs are (ptr, nbytes, peer)."""
        s = self._stream()
        u8 = self.nccl.NCCL_UINT8
        with self._device():
            self.nccl.groupStart()
            try:
                for ptr, nbytes, peer in sends:
                    if nbytes:
                        self.comm.send(ptr, nbytes, u8, peer, s.ptr)
                for ptr, nbytes, peer in recvs:
                    if nbytes:
                        self.comm.recv(ptr, nbytes, u8, peer, s.ptr)
            finally:
                self.nccl.groupEnd()
        return self._queued(s)

    def gather(self, out, inp, root):
        nb = inp.nbytes
        sends = [(inp.data.ptr, nb, root)] if self.rank != root else []
        recvs = []
        if self.rank == root:
            base = out.data.ptr
            self.cupy.cuda.runtime.memcpyAsync(base + root * nb, inp.data.ptr, nb, 3,
                                               self._stream().ptr)
            recvs = [(base + r * nb, nb, r) for r in range(self.size) if r != root]
        return self._exchange(sends, recvs)

    def scatter(self, out, inp, root):
        nb = out.nbytes
        recvs = [(out.data.ptr, nb, root)] if self.rank != root else []
        sends = []
        if self.rank == root:
            base = inp.data.ptr
            self.cupy.cuda.runtime.memcpyAsync(out.data.ptr, base + root * nb, nb, 3,
                                               self._stream().ptr)
            sends = [(base + r * nb, nb, r) for r in range(self.size) if r != root]
        return self._exchange(sends, recvs)

    def all_to_all(self, out, out_counts, inp, in_counts):
        isz, osz = inp.itemsize, out.itemsize
        sends, recvs, at_i, at_o = [], [], 0, 0
        for peer in range(self.size):
            sends.append((inp.data.ptr + at_i, in_counts[peer] * isz, peer))
            recvs.append((out.data.ptr + at_o, out_counts[peer] * osz, peer))
            at_i += in_counts[peer] * isz
            at_o += out_counts[peer] * osz
        return self._exchange(sends, recvs)

    def send(self, h, peer, tag):
        return self._exchange([(h.data.ptr, h.nbytes, peer)], [])

    def recv(self, h, peer, tag):
        if peer is None:
            raise RuntimeError("nccl: recv needs a source rank (NCCL has no receive from any "
                               "rank); pass src=, or use backend='mpi'")
        return self._exchange([], [(h.data.ptr, h.nbytes, peer)])

    def barrier(self):
        one = self.cupy.zeros(1, np.float32)
        return self.all_reduce(one, "sum")

    def close(self):
        comm, self.comm = self.comm, None
        if comm is not None:
            comm.destroy()

