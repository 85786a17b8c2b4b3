"""Host reads wait for the commands using their buffer, not the whole queue.

A gate (a marker waiting on a user event) holds every command queued after it. A read
of a tensor nothing behind the gate uses must return while the gate is shut; a read
of one that a gated command writes (directly, through a view, by copy_ or fill_, or
in a pool block an earlier tensor used) must not return until it opens, and then see
the write. Reads run in a thread so a wrong wait fails the test instead of hanging it.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import dispatchtorch as dt
import dispatchtorch.nn.functional as F

WAIT = 5.0         # seconds a read that must not wait may take
HELD = 0.2         # seconds a read that must wait is watched before the gate opens


@pytest.fixture
def gate(device):
    """gate() -> context manager: commands queued inside wait until it exits."""
    cl = device.cl

    @contextlib.contextmanager
    def shut():
        device.synchronize()
        opened = cl.UserEvent(device.ctx)
        cl.enqueue_marker(device.queue, wait_for=[opened])
        try:
            yield
        finally:
            opened.set_status(cl.command_execution_status.COMPLETE)
            device.synchronize()
    return shut


def started(fn):
    """(thread, box): fn() running in a thread; box['value'] or box['error'] when done."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:          # handed to the test
            box["error"] = exc
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def returns_while_shut(fn):
    t, box = started(fn)
    t.join(WAIT)
    assert not t.is_alive(), "the read waited for commands that do not use its buffer"
    if "error" in box:
        raise box["error"]
    return box["value"]


def cpu(a):
    return dt.tensor(np.asarray(a))


def test_reads_of_untouched_tensors_do_not_wait(gate):
    y = dt.tensor([3, 1, 4, 1], device="opencl")
    w = dt.ones(64, 64, device="opencl")
    f = dt.tensor([2.5], device="opencl")
    idx = dt.tensor([0, 2], device="opencl")
    with gate():
        busy = w @ w                           # queued behind the gate
        assert returns_while_shut(y.tolist) == [3, 1, 4, 1]
        assert returns_while_shut(f.item) == 2.5
        assert returns_while_shut(lambda: bool(f)) is True
        assert returns_while_shut(lambda: y.cpu().tolist()) == [3, 1, 4, 1]
        assert "3, 1, 4, 1" in returns_while_shut(lambda: repr(y))
        assert returns_while_shut(lambda: y[::2].tolist()) == [3, 4]         # a strided view
        # argument checks that read an untouched tensor: the loss's target range, an index
        logits = busy[:4, :8]
        loss = returns_while_shut(lambda: F.cross_entropy(logits, y))
        picked = returns_while_shut(lambda: w[idx])
    want = F.cross_entropy(cpu(np.ones((4, 8), np.float32) * 64), cpu(np.array([3, 1, 4, 1])))
    assert loss.item() == pytest.approx(want.item(), rel=1e-6)
    assert picked.shape == (2, 64) and picked.sum().item() == 128


def test_reading_a_tensor_a_queued_kernel_only_reads_does_not_wait(gate):
    y = dt.tensor([3, 1, 4, 1], device="opencl")
    x = dt.ones(4, 8, device="opencl")
    with gate():
        loss = F.cross_entropy(x * 2, y)       # its kernel reads y, behind the gate
        picked = x[0][y]                       # a gather reads y too
        assert returns_while_shut(y.tolist) == [3, 1, 4, 1]
        assert returns_while_shut(lambda: F.cross_entropy(x, y)) is not None   # the next check
    assert loss.item() == pytest.approx(np.log(8), rel=1e-6)
    assert picked.tolist() == [1.0] * 4


def test_kernel_signatures_say_which_buffers_are_written():
    from dispatchtorch_opencl.uses import buffer_params
    src = ("inline void helper(__global float* q) {}\n"
           "__kernel void k_name(__global float* p_out, long o_out, __global const float* p_a,\n"
           "                     long n, __global long* counts, __local float* scratch,\n"
           "                     global const int* q, __constant float* table, global int* r) { }")
    assert buffer_params(src, "k_name") == ((0, 2, 4, 6, 7, 8), (0, 4, 8))
    assert buffer_params(src, "other") is None


def must_wait(gate, write, read, want=None):
    """read() blocks while write()'s command is gated, then returns want (returned)."""
    with gate():
        write()
        t, box = started(read)
        t.join(HELD)
        assert t.is_alive(), "the read returned before the command writing its buffer ran"
    t.join(WAIT)
    assert not t.is_alive() and "error" not in box, box.get("error")
    if want is not None:
        np.testing.assert_array_equal(np.asarray(box["value"]), np.asarray(want))
    return box["value"]


def test_a_read_waits_for_a_kernel_writing_its_tensor(gate):
    x = dt.arange(8.0, device="opencl")
    out = {}
    must_wait(gate, lambda: out.setdefault("y", x * 2), lambda: out["y"].tolist(),
              [2.0 * i for i in range(8)])


def test_a_read_waits_for_an_in_place_write_through_a_view(gate):
    x = dt.arange(8.0, device="opencl")
    must_wait(gate, lambda: x[::2].mul_(10), lambda: x.tolist(),
              [0, 1, 20, 3, 40, 5, 60, 7])
    y = dt.arange(6.0, device="opencl").reshape(2, 3)
    must_wait(gate, lambda: y.t()[1].add_(1), lambda: y[:, 1].tolist(), [2, 5])


def test_a_read_waits_for_copies_and_fills(gate):
    x = dt.arange(5.0, device="opencl")
    y = dt.zeros(5, device="opencl")
    must_wait(gate, lambda: y.copy_(x), lambda: y.tolist(), [0, 1, 2, 3, 4])
    must_wait(gate, lambda: y.fill_(7), lambda: y.sum().item(), 35)
    z = dt.zeros(5, device="opencl")
    must_wait(gate, lambda: z.copy_(x.to(dt.int32)), lambda: z.tolist(), [0, 1, 2, 3, 4])


def test_an_upload_is_queued_after_the_old_users_of_its_pool_block(gate):
    n = 1 << 16                                # large enough to go through the pool
    x = dt.ones(n, device="opencl")
    data = np.arange(n, dtype=np.float32)
    with gate():
        t = x * 3                              # gated: writes a pool block ...
        block = t._h.buf.int_ptr
        del t                                  # ... that goes back to the pool at once
        up = returns_while_shut(lambda: dt.tensor(data, device="opencl"))   # no wait
        assert up._h.buf.int_ptr == block      # the same block: queued after the kernel
        data[:] = -1                           # the transfer has its own copy
    np.testing.assert_array_equal(up.cpu().numpy(), np.arange(n, dtype=np.float32))


def test_a_compiled_replay_is_waited_for(gate):
    fn = dt.compile(lambda a, b: (a * b + 1).exp())
    a = dt.full((256,), 0.5, device="opencl")
    b = dt.full((256,), 2.0, device="opencl")
    fn(a, b)                                   # captured and built outside the gate
    out = {}
    got = must_wait(gate, lambda: out.setdefault("y", fn(a, b)), lambda: out["y"].sum().item())
    assert got == pytest.approx(256 * np.exp(2.0), rel=1e-5)


def test_synchronize_forgets_finished_uses(device):
    x = dt.ones(16, device="opencl")
    (x + 1).sum()
    assert len(device.uses)
    device.synchronize()
    assert not device.uses.write


def test_the_record_of_uses_stays_bounded(device, monkeypatch):
    monkeypatch.setattr(device.uses, "limit", 8)
    device.synchronize()
    kept = [dt.full((4,), float(i), device="opencl") * 2 for i in range(40)]
    assert len(device.uses) <= 8
    assert [t[1].item() for t in kept] == [2.0 * i for i in range(40)]


WRITES = {   # every way a small tensor made from host values is written on the device
    "in place": lambda t: t.add_(1),
    "through a view": lambda t: t[1:].mul_(2),
    "copy_ (buffer copy)": lambda t: t.copy_(dt.arange(4.0, device="opencl") + 10),
    "copy_ (cast kernel)": lambda t: t.copy_(dt.tensor([7, 8, 9, 10], device="opencl")),
    "fill_ (buffer fill)": lambda t: t.fill_(3),
    "fill_ (strided kernel)": lambda t: t[::2].fill_(5),
    "out=": lambda t: dt.add(t, t, out=t),
    "index_put_": lambda t: t.index_put_((dt.tensor([0, 3], device="opencl"),),
                                         dt.tensor([-1.0, -2.0], device="opencl")),
    "optimizer step": lambda t: _sgd_step(t),
}


def _sgd_step(t):
    p = dt.nn.Parameter(t)                     # shares t's storage
    p.grad = dt.ones(4, device="opencl")
    dt.optim.SGD([p], lr=0.5).step()


@pytest.mark.parametrize("how", list(WRITES))
def test_a_write_drops_the_host_copy(how):
    start = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    t, ref = dt.tensor(start, device="opencl"), dt.tensor(start)
    assert t._h.storage.host is not None                 # made from host values
    WRITES[how](t)
    if how == "optimizer step":
        want = start - 0.5
    else:
        WRITES[how](ref)
        want = ref.numpy()
    assert t._h.storage.host is None
    np.testing.assert_array_equal(t.cpu().numpy(), want)
    np.testing.assert_array_equal(t[1:3].cpu().numpy(), want[1:3])


def _int_div(a, b):
    """The backend's integer div prim on handles (its zero check reads b back)."""
    from dispatchtorch_opencl.kernels import KERNELS
    out = dt.empty(3, dtype=dt.int64, device="opencl")
    try:
        KERNELS["div"](out._h, a._h, b._h)
    except ZeroDivisionError as exc:
        return str(exc)
    return out


def test_reads_that_pack_or_check_first_do_not_wait(gate):
    big = dt.arange(64 * 64, device="opencl").reshape(64, 64)   # a kernel's output
    big.cpu()
    a = dt.tensor([8, 9, 10], device="opencl") + 0
    d = dt.tensor([1, 2, 3], device="opencl") + 1               # written, then finished
    d.cpu()
    w = dt.ones(64, 64, device="opencl")
    with gate():
        w @ w                                                   # queued behind the gate
        col = returns_while_shut(lambda: big[:, 3].tolist())    # packed by a kernel aside
        q = returns_while_shut(lambda: _int_div(a, d))          # checked by a kernel aside
    assert col == list(range(3, 64 * 64, 64))
    assert q.tolist() == [4, 3, 2]


def test_a_packing_or_checking_read_waits_for_the_write_it_reads(gate):
    big = dt.zeros(64, 64, device="opencl")
    must_wait(gate, lambda: big.fill_(2.0), lambda: big[:, 5].tolist(), [2.0] * 64)
    a = dt.tensor([8, 9, 10], device="opencl") + 0
    d = dt.tensor([1, 2, 3], device="opencl") + 1
    d.cpu()
    assert "by zero" in must_wait(gate, lambda: d.mul_(0), lambda: _int_div(a, d))
