"""On a GPU: every prim on cupy against the CPU reference, the fused kernels against
their xp twins, DLPack with cupy and PyTorch, out of memory, and asynchrony.
Without a usable GPU the whole module skips with the backend's reason."""
import time

import numpy as np
import pytest

from dispatchtorch_cuda import _bf16
from dispatchtorch_cuda.backend import OutOfMemoryError, create_backend

GPU = create_backend()
if not GPU.devices():
    pytest.skip(f"no usable GPU: {GPU.unavailable_reason}", allow_module_level=True)

import cupy  # noqa: E402

import dispatchtorch as torch  # noqa: E402
from dispatchtorch.backend import BackendError  # noqa: E402
from test_cuda_fused import ALL_BITS, _f32_probe  # noqa: E402
from test_cuda_kernels import PARAMS, check_prim, check_relu  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("prim,dtype", PARAMS)
def test_prim_on_the_gpu_matches_reference(prim, dtype):
    check_prim(GPU, prim, dtype, exact=False)


def test_relu_kernel_on_the_gpu():
    check_relu(GPU)


def test_float16_matmul_accumulates_in_float32():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 4096)).astype(np.float16)
    b = rng.standard_normal((4096, 64)).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = (torch.tensor(a, device="cuda") @ torch.tensor(b, device="cuda")).float().cpu().numpy()
    # float16 accumulation would be off by ~1e-2 of the largest value; float32 by rounding
    assert np.abs(got - want).max() / np.abs(want).max() < 3e-3


def test_fused_bfloat16_kernels_match_their_twins():
    bits = cupy.asarray(ALL_BITS)
    fused = GPU._am.bf16_to_f32(bits)
    twin = _bf16.to_f32(cupy, bits)
    assert (fused.view(cupy.uint32) == twin.view(cupy.uint32)).all()
    f = cupy.asarray(_f32_probe())
    out = cupy.empty(f.shape, cupy.uint16)
    GPU._am.f32_to_bf16(f, out)
    assert (out == _bf16.from_f32(cupy, f)).all()
    strided = cupy.zeros((2 * f.size,), cupy.uint16)[::2]          # writes through a view
    GPU._am.f32_to_bf16(f, strided)
    assert (strided == out).all()


def test_dlpack_with_cupy_is_zero_copy():
    x = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    t = torch.from_dlpack(x)
    assert t.device.type == "cuda" and t.shape == (2, 3) and t.dtype is torch.float32
    x[0, 0] = 42
    assert t[0, 0].item() == 42                      # same memory
    y = cupy.from_dlpack(t)
    t.add_(1)
    assert float(y[0, 0]) == 43 and y.data.ptr == x.data.ptr
    assert torch.from_dlpack(x.T).tolist() == x.T.get().tolist()    # non-contiguous: copied


def test_dlpack_with_pytorch_cuda_is_zero_copy():
    pt = pytest.importorskip("torch")
    if not pt.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    p = pt.arange(6, dtype=pt.float32, device="cuda")
    t = torch.from_dlpack(p)
    p.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    back = pt.from_dlpack(t)
    assert back.data_ptr() == p.data_ptr()
    q = torch.ones(3, 4, device="cuda")[:, 1:]       # a strided view exports its strides
    assert pt.from_dlpack(q).tolist() == [[1.0] * 3] * 3
    b = torch.tensor([1.5, -2.0], dtype=torch.bfloat16, device="cuda")
    try:
        pb = pt.from_dlpack(b)
    except (BufferError, TypeError) as exc:          # cupy without a bfloat16 dtype
        assert "bfloat16" in str(exc)
    else:
        assert pb.dtype == pt.bfloat16 and pb.float().tolist() == [1.5, -2.0]


def test_out_of_memory_is_clear_and_harmless():
    keep = torch.arange(1000.0, device="cuda")
    with pytest.raises(OutOfMemoryError, match=r"CUDA out of memory on cuda:0: tried to allocate"):
        GPU.empty((1 << 46,), "float32", 0)
    row = torch.ones(1 << 22, device="cuda")
    with pytest.raises(BackendError, match=r"^add failed on backend 'cuda'.*out of memory"):
        row.reshape(1, -1).expand(1 << 22, -1) + 1   # 64 TiB
    assert keep.sum().item() == 499500.0 and row.sum().item() == float(1 << 22)


def test_queueing_does_not_wait_for_the_gpu():
    a = torch.ones(4096, 4096, device="cuda")
    b = a @ a
    GPU.synchronize(0)
    start = time.perf_counter()
    for _ in range(40):
        b = a @ a
    queued = time.perf_counter() - start
    GPU.synchronize(0)
    total = time.perf_counter() - start
    assert queued < 0.5 * total, (queued, total)
    assert b[0, 0].item() == 4096.0                  # .item() waits for the result


@pytest.mark.skipif(len(GPU.devices()) < 2, reason="needs two GPUs")
def test_second_gpu():
    x = torch.arange(5.0, device="cuda:1")
    y = (x * 2).sum()
    assert y.device == torch.device("cuda:1") and y.item() == 20.0
    assert GPU.device_index(x._h) == 1
    assert x.to("cuda:0").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
