"""The CUDA fused-region source (dispatchtorch.compile's hook) without a GPU: compiled by
nvcc for sm_90 inside a kernel shaped like cupy's ElementwiseKernel, and its arithmetic
run on the host with g++ against numpy."""
import shutil
import subprocess

import numpy as np
import pytest

from dispatchtorch.backend.fusion import FusedOp, FusedRegion
from dispatchtorch_cuda import _fusion_source as F

# exp(x * y + 2) * x - y with a NaN-propagating maximum, a comparison and a where:
REGION = FusedRegion((1000,), ("float32", "float32"), (
    FusedOp("mul", (("in", 0), ("in", 1)), "float32", "float32"),
    FusedOp("add", (("tmp", 0), ("const", 2.0)), "float32", "float32"),
    FusedOp("exp", (("tmp", 1),), "float32", "float32"),
    FusedOp("maximum", (("tmp", 2), ("in", 1)), "float32", "float32"),
    FusedOp("gt", (("in", 0), ("const", 0.0)), "bool", "float32"),
    FusedOp("where", (("tmp", 4), ("tmp", 3), ("const", float("-inf"))), "float32", "float32"),
    FusedOp("cast", (("tmp", 4),), "float32", "bool"),
    FusedOp("relu", (("in", 1),), "float32", "float32"),
), (5, 6, 7))


def _numpy(x, y):
    with np.errstate(all="ignore"):
        t = np.maximum(np.exp(x * y + np.float32(2)), y)
        return np.where(x > 0, t, np.float32(-np.inf)), (x > 0).astype(np.float32), \
            np.where(y <= 0, np.float32(0), y)


def test_operation_names_every_output_and_input():
    ins, outs, body = F.operation(REGION)
    assert ins == "float32 i0, float32 i1" and outs == "float32 o0, float32 o1, float32 o2"
    assert body.endswith("o0 = t5; o1 = t6; o2 = t7;")
    assert F.can_fuse("exp", "float32") and not F.can_fuse("exp", "float16")
    assert not F.can_fuse("div", "int64")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_region_source_compiles_for_hopper(tmp_path):
    _, _, body = F.operation(REGION)
    src = tmp_path / "region.cu"
    src.write_text('extern "C" __global__ void region(const float* i0_, const float* i1_, '
                   'float* o0_, float* o1_, float* o2_, long n) {\n'
                   "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i >= n) return;\n"
                   "  const float& i0 = i0_[i]; const float& i1 = i1_[i];\n"
                   "  float& o0 = o0_[i]; float& o1 = o1_[i]; float& o2 = o2_[i];\n"
                   f"  {body}\n}}\n")
    r = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(src), "-o", str(tmp_path / "r.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_region_source_computes_numpys_values_on_the_host(tmp_path):
    _, _, body = F.operation(REGION)
    src = tmp_path / "region.cpp"
    src.write_text(
        "#include <cmath>\n#include <cstdio>\n#include <vector>\nusing namespace std;\n"
        "int main(int argc, char** argv) {\n"
        "  FILE* in = fopen(argv[1], \"rb\"); long n; fread(&n, 8, 1, in);\n"
        "  vector<float> x(n), y(n); fread(x.data(), 4, n, in); fread(y.data(), 4, n, in);\n"
        "  fclose(in); FILE* out = fopen(argv[2], \"wb\");\n"
        "  for (long k = 0; k < 3; ++k) for (long e = 0; e < n; ++e) {\n"
        "    const float i0 = x[e], i1 = y[e]; float o0, o1, o2;\n"
        f"    {body}\n"
        "    float r = k == 0 ? o0 : k == 1 ? o1 : o2; fwrite(&r, 4, 1, out); }\n"
        "  fclose(out); return 0; }\n")
    exe = tmp_path / "region"
    r = subprocess.run(["g++", "-O1", "-ffp-contract=off", "-o", str(exe), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    y[:3] = [np.nan, 0.0, -0.0]
    (tmp_path / "in.bin").write_bytes(np.int64(1000).tobytes() + x.tobytes() + y.tobytes())
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True,
                   timeout=60)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(3, 1000)
    for g, w in zip(got, _numpy(x, y)):
        np.testing.assert_allclose(g, w, rtol=2e-7, atol=0)
