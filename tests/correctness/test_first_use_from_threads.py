"""Threads that meet a device, or one cached kernel, at the same moment: one Place per
device, one OpenCL context per device, and a kernel's arguments never swapped between
two launches (clSetKernelArg and the launch are one step per kernel object). The
conformance contract's `threads` check found all three on OpenCL; these make each race
certain instead of likely."""
import threading
import time

import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch import _place
from dispatchtorch._device import device as Device


def _together(n, fn):
    start = threading.Barrier(n)
    out = [None] * n

    def run(i):
        start.wait()
        out[i] = fn()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_one_place_per_device_when_threads_ask_first_together(monkeypatch):
    real = _place.Place

    class SlowPlace(real):
        __slots__ = ()

        def __init__(self, dev):
            time.sleep(0.05)                # wide open: every thread is inside at once
            super().__init__(dev)
    monkeypatch.setattr(_place, "Place", SlowPlace)
    monkeypatch.setattr(_place, "_places", {})
    monkeypatch.setattr(_place, "_lookup", {})
    got = _together(4, lambda: _place.place_of(Device("cpu")))
    assert all(p is got[0] for p in got)


@pytest.fixture
def fresh_opencl_device():
    if not torch.opencl.is_available():
        pytest.skip("no OpenCL device")
    from dispatchtorch_opencl.device import discover
    devices, why = discover()
    return devices[0]


def test_one_context_per_opencl_device(fresh_opencl_device):
    dev = fresh_opencl_device
    real_cl = dev.cl

    class SlowContext:            # pyopencl, with a context that takes a while to make
        def __getattr__(self, name):
            return getattr(real_cl, name)

        def Context(self, *args, **kwargs):
            time.sleep(0.05)
            return real_cl.Context(*args, **kwargs)
    dev.cl = SlowContext()
    queues = _together(4, lambda: dev.queue)
    dev.cl = real_cl
    assert all(q is queues[0] for q in queues)
    assert queues[0].context == dev.ctx


def test_a_kernel_is_never_in_two_launches_at_once(fresh_opencl_device):
    dev = fresh_opencl_device
    inside, overlaps = [0], []

    class ArgsHoldingKernel:       # as cl.Kernel: arguments set on the object, then queued
        def __call__(self, queue, gsize, lsize, *args, **kw):
            inside[0] += 1
            overlaps.append(inside[0] > 1)
            time.sleep(0.02)
            inside[0] -= 1
            return None
    kernel = ArgsHoldingKernel()
    dev.kernel_buffers[kernel] = ((), ())
    _together(4, lambda: dev.launch(kernel, (1,), (1,), [np.int32(1)], "probe"))
    assert len(overlaps) == 4 and not any(overlaps)
