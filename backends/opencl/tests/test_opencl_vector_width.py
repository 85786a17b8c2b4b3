"""The vector widths the CPU matmul blocks are sized by: PoCL's reported native width
capped at 256 bits where its compiler targets an AVX2 CPU (PoCL 3.0 / LLVM 14 on Zen 4
names znver3), kept where the CPU it names has AVX-512 and on other platforms."""
from __future__ import annotations

from dispatchtorch_opencl.vector_width import compiled_widths, pocl_cpu

WIDE = {"float32": 16, "float64": 8}


def test_pocl_cpu_from_the_device_version():
    assert pocl_cpu("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-znver3") == "znver3"
    assert pocl_cpu("OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-skylake-avx512") \
        == "skylake-avx512"
    assert pocl_cpu("OpenCL 3.0 CUDA") is None
    assert pocl_cpu("OpenCL 3.0 PoCL HSTR: cuda-sm_80") is None


def test_widths_capped_only_for_an_avx2_target():
    zen3 = "OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-znver3"
    assert compiled_widths(WIDE, zen3, True) == {"float32": 8, "float64": 4}
    assert compiled_widths({"float32": 4, "float64": 2}, zen3, True) == {"float32": 4, "float64": 2}
    for cpu in ("skylake-avx512", "sapphirerapids", "znver4"):
        v = f"OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-{cpu}"
        assert compiled_widths(WIDE, v, True) == WIDE
    assert compiled_widths(WIDE, "OpenCL 3.0 (Build 0)", True) == WIDE      # not PoCL
    assert compiled_widths(WIDE, zen3, False) == WIDE                        # not a CPU
