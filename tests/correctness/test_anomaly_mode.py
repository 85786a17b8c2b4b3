"""Anomaly detection: backward names the node whose gradient is NaN, as PyTorch; the
setting is process-wide (PyTorch's AnomalyMode is a global flag, not per thread)."""
import threading
import warnings

import pytest

import dispatchtorch as torch


def _nan_backward(T):
    x = T.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()          # d sqrt(x)/dx at 0 is inf; inf * 0 = nan
    y.backward()
    return x.grad


def test_detect_anomaly_names_the_node():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            assert torch.is_anomaly_enabled()
            with pytest.raises(RuntimeError, match=r"Function '\w+Backward0' returned nan values "
                                                   r"in its 0th output"):
                _nan_backward(torch)
    assert not torch.is_anomaly_enabled()
    assert _nan_backward(torch).isnan().any()         # off: NaN flows through, as in PyTorch


def test_check_nan_false_and_set_detect_anomaly():
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.is_anomaly_enabled() and not torch.is_anomaly_check_nan_enabled()
        assert _nan_backward(torch).isnan().any()
    torch.autograd.set_detect_anomaly(True)
    try:
        seen = []
        t = threading.Thread(target=lambda: seen.append(torch.is_anomaly_enabled()))
        t.start()
        t.join()
        assert seen == [True]           # process-wide, as PyTorch
    finally:
        torch.autograd.set_detect_anomaly(False)
    assert not torch.is_anomaly_enabled()


def test_matches_pytorch_message():
    torch_ = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msgs = []
        for T in (torch, torch_):
            with T.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as info:
                    _nan_backward(T)
            msgs.append(str(info.value).split(".")[0])
    assert msgs[0] == msgs[1], msgs
