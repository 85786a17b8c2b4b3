import pytest

import dispatchtorch as torch


def test_cpu_only_machine_reports_no_cuda_without_raising():
    available = torch.cuda.is_available()
    assert isinstance(available, bool)
    if not available:
        assert torch.cuda.device_count() == 0
        with pytest.raises(RuntimeError, match="cuda"):
            torch.cuda.synchronize()


def test_unknown_device_type_module():
    from dispatchtorch._accelerator import DeviceModule
    m = DeviceModule("nosuchdevice")
    assert not m.is_available() and m.device_count() == 0
    with pytest.raises(RuntimeError, match="no backend is installed for device type 'nosuchdevice'"):
        m.get_device_name()


def test_set_num_threads_limits_the_cpu_pools():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="positive"):
        torch.set_num_threads(0)
