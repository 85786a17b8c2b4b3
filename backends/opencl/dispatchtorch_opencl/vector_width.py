"""The vector widths a device's compiler really targets, which the CPU matmul kernels
size their register blocks by.

PoCL reports `native_vector_width_float` 16 where the host has AVX-512, but it compiles
for the LLVM CPU named at the end of its device version ("... HSTR:
pthread-x86_64-unknown-linux-gnu-znver3"). PoCL 3.0's LLVM 14 knows no znver4, so on
Zen 4 it targets znver3: AVX2, 16 ymm registers, and a 16-float vector is two of them.
Blocks sized for 32 zmm registers then spill (one PoCL thread, device time, the packed
8x16 micro-kernel at 128x512x512: 1.04 ms against 0.62 for 6x16; the 4x32 nn kernel
1.29 against 0.68 for 4x16). So on PoCL the widths are capped at 256 bits unless its
CPU is one LLVM compiles with AVX-512.
"""
from __future__ import annotations

# LLVM x86 CPU names whose feature set includes AVX-512F
AVX512_CPUS = frozenset({
    "knl", "knm", "skylake-avx512", "skx", "cascadelake", "cooperlake", "cannonlake",
    "icelake-client", "icelake-server", "rocketlake", "tigerlake", "sapphirerapids",
    "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids", "znver4", "znver5",
    "x86-64-v4"})
NARROW = {"float32": 8, "float64": 4}        # 256-bit vectors


def pocl_cpu(version):
    """The LLVM CPU name a PoCL CPU device compiles for, from its device version
    string, or None where the string names none."""
    if "PoCL" not in version or "HSTR:" not in version:
        return None
    target = version.split("HSTR:", 1)[1].strip().split()[0]
    if not target.startswith("pthread-") and not target.startswith("basic-"):
        return None
    parts = target.split("-")
    # pthread-<arch>-<vendor>-<os>-<env>-<cpu...>: the CPU may itself hold dashes
    return "-".join(parts[5:]) or None


def compiled_widths(native, version, is_cpu):
    """{dtype: lanes}: native ({"float32": n, "float64": n}) as the device reports it,
    capped at 256 bits on a PoCL CPU device whose target CPU has no AVX-512."""
    cpu = pocl_cpu(version) if is_cpu else None
    if cpu is None or cpu in AVX512_CPUS:
        return dict(native)
    return {dt: min(n, NARROW[dt]) for dt, n in native.items()}
