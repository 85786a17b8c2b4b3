"""Finding the GPUs, or saying exactly why there are none."""
from __future__ import annotations

from dispatchtorch.backend import DTYPE_NAMES, DeviceInfo

# float16 arithmetic needs compute capability 5.3; bfloat16 is stored as bits and
# computed in float32, so every GPU cupy runs on has it.
_HALF_FROM = (5, 3)
INSTALL_HINT = ("install the extra matching your CUDA driver: "
                "pip install \"./backends/cuda[cuda12]\" (or [cuda13]) from a dispatchtorch "
                "checkout (the package is not on the package index yet)")


def _version(v: int) -> str:
    """CUDA's 12090 -> '12.9'."""
    return f"{v // 1000}.{v % 1000 // 10}" if v else "none"


def probe(cupy):
    """(devices, reason): the usable GPUs, and why there are none when so."""
    runtime = cupy.cuda.runtime
    versions = _versions(cupy)
    try:
        count = runtime.getDeviceCount()
    except runtime.CUDARuntimeError as exc:
        return [], (f"CUDA is not usable: {exc} (cupy {cupy.__version__}, CUDA runtime "
                    f"{versions['cuda_runtime']}, driver {versions['cuda_driver']})")
    if count == 0:
        return [], (f"no CUDA device found (cupy {cupy.__version__}, driver "
                    f"{versions['cuda_driver']})")
    return [_describe(runtime, i, versions) for i in range(count)], None


def _versions(cupy):
    runtime = cupy.cuda.runtime
    out = {"cupy": cupy.__version__}
    for key, call in (("cuda_runtime", runtime.runtimeGetVersion),
                      ("cuda_driver", runtime.driverGetVersion)):
        try:
            out[key] = _version(call())
        except Exception:        # a missing libcuda makes even the version query fail
            out[key] = "none"
    return out


def _describe(runtime, index, versions):
    p = runtime.getDeviceProperties(index)
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    cc = (int(p["major"]), int(p["minor"]))
    dtypes = frozenset(n for n in DTYPE_NAMES if n != "float16" or cc >= _HALF_FROM)
    props = {"compute_capability": f"{cc[0]}.{cc[1]}",
             "memory_gib": round(p["totalGlobalMem"] / 2**30, 1),
             "multiprocessors": int(p["multiProcessorCount"]),
             "fp64": True, "fp16": cc >= _HALF_FROM, "bf16": "float32 math",
             **versions}
    return DeviceInfo(index, name, dtypes, props)
