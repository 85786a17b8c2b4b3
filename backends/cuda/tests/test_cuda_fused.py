"""The fused kernels' logic without a GPU: bfloat16 conversions (xp twins) against
ml_dtypes exhaustively; every CUDA body compiled by nvcc for sm_90 where nvcc is
installed; the bodies' arithmetic run on the host with g++."""
import shutil
import subprocess

import ml_dtypes
import numpy as np
import pytest

from dispatchtorch_cuda import _bf16
from dispatchtorch_cuda import _cuda_sources as _src

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def test_every_bfloat16_widens_exactly():
    got = _bf16.to_f32(np, ALL_BITS)
    want = ALL_BITS.view(BF16).astype(np.float32)
    assert got.dtype == np.float32
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all()


def _f32_probe():
    rng = np.random.default_rng(0)
    patterns = [rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32),
                # exact ties at every bfloat16 (round half to even), just above and below
                (ALL_BITS.astype(np.uint32) << 16) | np.uint32(0x8000),
                (ALL_BITS.astype(np.uint32) << 16) | np.uint32(0x8001),
                (ALL_BITS.astype(np.uint32) << 16) | np.uint32(0x7FFF),
                ALL_BITS.astype(np.uint32) << 16,
                np.array([0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x00000001,
                          0x80000001, 0x007FFFFF, 0x7FC00000, 0xFFC00000, 0x7F800001],
                         dtype=np.uint32)]
    return np.concatenate(patterns).view(np.float32)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")   # ml_dtypes on NaN
def test_float32_rounds_like_ml_dtypes():
    f = _f32_probe()
    got = _bf16.from_f32(np, f)
    want = f.astype(BF16).view(np.uint16)
    gnan, wnan = np.isnan(got.view(BF16)), np.isnan(want.view(BF16))
    assert (gnan == wnan).all()
    assert (got[~gnan] == want[~wnan]).all()
    # NaN keeps its sign
    assert ((got[gnan] >> 15) == (f.view(np.uint32)[gnan] >> 31)).all()


def test_float64_goes_through_float32_as_the_reference_does():
    # 1 + 2**-8 + 2**-40 rounds to 1 + 2**-8 in float32, a tie that goes to 1.0
    x = np.array([1 + 2.0 ** -8 + 2.0 ** -40])
    assert _bf16.from_f32(np, x)[0] == x.astype(BF16).view(np.uint16)[0] == 0x3F80


def test_strided_input_rounds_too():
    f = np.linspace(-3, 3, 40, dtype=np.float32).reshape(5, 8)[:, ::2]
    assert (_bf16.from_f32(np, f) == f.astype(BF16).view(np.uint16)).all()


def _elementwise_like(name, params, body, t="float"):
    """A CUDA kernel shaped like the one cupy's ElementwiseKernel generates for `body`:
    params are (C type, name, is output); T is the type placeholder."""
    args = ", ".join(f"{'' if out else 'const '}{t if ty == 'T' else ty}* {n}_"
                     for ty, n, out in params)
    refs = " ".join(f"{'' if out else 'const '}{ty}& {n} = {n}_[i];" for ty, n, out in params)
    return (f'extern "C" __global__ void {name}({args}, long n) {{\n  typedef {t} T;\n'
            "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i >= n) return;\n"
            f"  {refs}\n  {body}\n}}\n")


def _raw_like(name, body, t):
    """The run-product kernel as cupy generates it: raw arrays, the loop index i, n."""
    return (f'extern "C" __global__ void {name}(const long long* ts, const {t}* vs,'
            f" long long count, {t}* flat) {{\n  typedef {t} T;\n"
            "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;"
            " i += (long long)blockDim.x * gridDim.x) {\n"
            f"  {body}\n  }}\n}}\n")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_fused_kernel_bodies_compile_for_hopper(tmp_path):
    """Every fused body, inside a kernel shaped like cupy's ElementwiseKernel, compiles."""
    src = tmp_path / "fused.cu"
    src.write_text("".join([
        _elementwise_like("to_f32", [("unsigned short", "b", 0), ("float", "f", 1)],
                          _src.BF16_TO_F32_BODY),
        _elementwise_like("to_bf16", [("float", "f", 0), ("unsigned short", "b", 1)],
                          _src.F32_TO_BF16_BODY),
        *(_elementwise_like(f"where_{i}", [("bool", "c", 0), ("T", "a", 0), ("T", "b", 0),
                                            ("T", "out", 1)], _src.WHERE_BODY, t)
          for i, t in enumerate(("float", "double", "unsigned short", "bool", "long long"))),
        *(_elementwise_like(f"relu_{i}", [("T", "x", 0), ("T", "out", 1)], _src.RELU_BODY, t)
          for i, t in enumerate(("float", "double"))),
        *(_raw_like(f"run_product_{i}", _src.RUN_PRODUCT_BODY, t)
          for i, t in enumerate(("float", "double", "signed char", "unsigned char", "short",
                                 "int", "long long", "bool"))),
    ]))
    r = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(src), "-o", str(tmp_path / "fused.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_fused_kernel_bodies_compute_the_same_bits_on_the_host(tmp_path):
    """The fused bodies' arithmetic, run on the CPU with the two intrinsics emulated,
    gives ml_dtypes' bits for every probe value (the GPU test repeats this on device)."""
    src = tmp_path / "bodies.cpp"
    src.write_text(
        "#include <cstdio>\n#include <cstring>\n#include <vector>\n"
        "static float __uint_as_float(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }\n"
        "static unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }\n"
        "static float widen(unsigned short b) { float f; "
        f"{_src.BF16_TO_F32_BODY} return f; }}\n"
        "static unsigned short narrow(float f) { unsigned short b; "
        f"{_src.F32_TO_BF16_BODY} return b; }}\n"
        "int main(int argc, char** argv) {\n"
        "  FILE* in = std::fopen(argv[1], \"rb\"); long n; std::fread(&n, 8, 1, in);\n"
        "  std::vector<float> f(n); std::fread(f.data(), 4, n, in); std::fclose(in);\n"
        "  FILE* out = std::fopen(argv[2], \"wb\");\n"
        "  for (long i = 0; i < n; ++i) { unsigned short b = narrow(f[i]); std::fwrite(&b, 2, 1, out); }\n"
        "  for (long i = 0; i < 65536; ++i) { float w = widen((unsigned short)i); std::fwrite(&w, 4, 1, out); }\n"
        "  std::fclose(out); return 0; }\n")
    exe = tmp_path / "bodies"
    r = subprocess.run(["g++", "-O1", "-o", str(exe), str(src)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    f = _f32_probe()
    (tmp_path / "in.bin").write_bytes(np.int64(f.size).tobytes() + f.tobytes())
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True,
                   timeout=300)
    raw = (tmp_path / "out.bin").read_bytes()
    narrowed = np.frombuffer(raw[:2 * f.size], np.uint16)
    widened = np.frombuffer(raw[2 * f.size:], np.float32)
    assert (narrowed == _bf16.from_f32(np, f)).all()
    assert (widened.view(np.uint32) == _bf16.to_f32(np, ALL_BITS).view(np.uint32)).all()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_run_product_body_multiplies_in_the_reference_order(tmp_path):
    """Every 'thread' of the run-product body, run on the host, gives np.multiply.at's
    bits (the threads write distinct targets, so running them one by one is exact)."""
    rng = np.random.default_rng(3)
    n, m = 4000, 37
    ts = np.sort(rng.integers(0, m, n)).astype(np.int64)
    vs = rng.uniform(0.5, 1.7, n).astype(np.float32)
    flat = rng.uniform(-2, 2, m).astype(np.float32)
    src = tmp_path / "run_product.cpp"
    src.write_text(
        "#include <cstdio>\n#include <vector>\ntypedef float T;\n"
        "int main(int argc, char** argv) {\n"
        "  FILE* in = std::fopen(argv[1], \"rb\"); long long count, m;\n"
        "  std::fread(&count, 8, 1, in); std::fread(&m, 8, 1, in);\n"
        "  std::vector<long long> ts(count); std::vector<T> vs(count), flat(m);\n"
        "  std::fread(ts.data(), 8, count, in); std::fread(vs.data(), 4, count, in);\n"
        "  std::fread(flat.data(), 4, m, in); std::fclose(in);\n"
        "  for (long long i = 0; i < count; ++i) {\n"
        f"    {_src.RUN_PRODUCT_BODY}\n  }}\n"
        "  FILE* out = std::fopen(argv[2], \"wb\"); std::fwrite(flat.data(), 4, m, out);\n"
        "  std::fclose(out); return 0; }\n")
    exe = tmp_path / "run_product"
    r = subprocess.run(["g++", "-O1", "-ffp-contract=off", "-o", str(exe), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (tmp_path / "in.bin").write_bytes(np.array([n, m], np.int64).tobytes() + ts.tobytes()
                                      + vs.tobytes() + flat.tobytes())
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True,
                   timeout=300)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32)
    want = flat.copy()
    np.multiply.at(want, ts, vs)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
