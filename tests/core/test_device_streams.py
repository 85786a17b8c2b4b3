"""torch.<device>.set_device / device() / Stream / Event / stream() / rng states on a
backend device (OpenCL here; the two-device case runs in
tests/backend_kit/test_third_party_backends.py): the semantics PyTorch documents for
torch.cuda, on the one in-order queue each device has (docs/dropin.md)."""
import time

import numpy as np
import pytest

import dispatchtorch as torch

pytestmark = pytest.mark.skipif(not torch.opencl.is_available(), reason="no OpenCL device")
m = torch.opencl


def test_set_device_checks_and_keeps_the_current_index():
    m.set_device(0)
    assert m.current_device() == 0 and torch.accelerator.current_device_index() == 0
    assert str(torch.zeros(1, device="opencl").device) == "opencl:0"
    with pytest.raises(RuntimeError, match="invalid device ordinal 5"):
        m.set_device(5)
    with pytest.raises(ValueError, match="Expected a opencl device, but got: cpu"):
        m.set_device("cpu")
    m.set_device(-1)                             # PyTorch: a negative index changes nothing
    assert m.current_device() == 0
    with m.device("opencl:0"):
        assert m.current_device() == 0
    with m.device_of(torch.zeros(1)):            # a CPU tensor: no change
        assert m.current_device() == 0


def test_streams_are_the_devices_queue():
    s = m.Stream()
    assert s == m.current_stream() == m.default_stream() and s.device == torch.device("opencl:0")
    x = torch.randn(300, 300, device="opencl")
    with m.stream(s) as entered:
        assert entered is s and m.current_stream() is s
        y = x @ x
    assert m.current_stream() is not s
    s.wait_stream(m.default_stream())
    s.synchronize()
    assert s.query()
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy() @ x.cpu().numpy(),
                               rtol=1e-4, atol=1e-3)


def test_events_time_the_work_between_two_records():
    start, end = m.Event(enable_timing=True), m.Event(enable_timing=True)
    x = torch.randn(400, 400, device="opencl")
    start.record()
    t0 = time.perf_counter()
    for _ in range(5):
        x = (x @ x).tanh()
    end.record()
    wall_ms = (time.perf_counter() - t0) * 1000
    ms = start.elapsed_time(end)
    assert 0 < ms <= wall_ms * 1.01 + 0.5     # the device finished within the host's window
    assert end.query()
    untimed = m.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        untimed.elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        m.Event(enable_timing=True).elapsed_time(end)
    assert m.current_stream().record_event().query()


def test_rng_state_round_trips_the_draws():
    state = m.get_rng_state()
    a = torch.rand(4, device="opencl").cpu().numpy()
    m.set_rng_state(state)
    assert np.array_equal(torch.rand(4, device="opencl").cpu().numpy(), a)
    states = m.get_rng_state_all()
    assert len(states) == m.device_count()
    m.set_rng_state_all(states)


def test_other_pytorch_device_modules_are_absent_here():
    for mod in (torch.xpu, torch.mps, torch.mtia):
        assert mod.is_available() is False and mod.device_count() == 0
