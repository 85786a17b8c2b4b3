"""The optional Backend methods: declared on Backend with defaults that are right for a
backend without the feature, so the core calls them directly. The meta backend
implements none of them, so it shows the defaults as users meet them."""
import numpy as np
import pytest

import dispatchtorch as torch
from dispatchtorch._accelerator import DeviceModule
from dispatchtorch.backend import Backend
from backend_dists import ensure_core_backends


@pytest.fixture(scope="module", autouse=True)
def meta(tmp_path_factory):
    ensure_core_backends(tmp_path_factory.mktemp("core_eps"))


def test_dlpack_export_without_support_is_a_buffer_error_naming_the_backend():
    x = torch.empty(3, device="meta")
    with pytest.raises(BufferError, match=r"__dlpack__: backend 'meta' does not export DLPack"):
        x.__dlpack__()
    with pytest.raises(BufferError, match=r"__dlpack_device__: backend 'meta' has no DLPack"):
        x.__dlpack_device__()
    with pytest.raises(BufferError):        # numpy asks through the same protocol
        np.from_dlpack(x)


class _ForeignTensor:
    """A DLPack producer on a device no installed backend adopts (kDLOneAPI)."""

    def __dlpack_device__(self):
        return (14, 0)

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("nobody adopted it, so nobody may read it")


def test_from_dlpack_asks_every_backend_and_reports_when_all_decline():
    with pytest.raises(RuntimeError, match=r"from_dlpack: no installed backend accepts DLPack "
                                           r"device \(14, 0\)"):
        torch.from_dlpack(_ForeignTensor())


def test_defaults_of_a_bare_backend():
    bk = Backend()
    assert bk.from_dlpack(_ForeignTensor()) is None
    assert bk.empty_cache() is None
    bk.set_num_threads(4)
    assert bk.get_num_threads() == 1
    assert bk.collectives_engine("nccl", None, 0) is None
    assert bk.can_fuse("add", "float32") is False and bk.fuse_elementwise(None) is None


def test_empty_cache_on_a_backend_without_a_pool_does_nothing():
    x = torch.ones(2, device="meta")
    DeviceModule("meta").empty_cache()
    assert x.shape == (2,) and x.device.type == "meta"


def test_cpu_reference_shares_host_memory_only_when_asked():
    from dispatchtorch.dispatch import get_backend
    bk = get_backend("cpu").backend
    a = np.arange(4.0)
    shared, copied = bk.from_host(a, 0, copy=False), bk.from_host(a, 0)
    a[0] = 7.0
    assert shared[0] == 7.0 and copied[0] == 0.0
