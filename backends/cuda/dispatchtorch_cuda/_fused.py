"""The few hand-written CUDA kernels, for where cupy has no one-pass function (their
source: `_cuda_sources.py`).

Each has an xp-op twin in `_array_module.NumpyModule` (bfloat16: `_bf16.py`) that the
CPU-only tests run; the GPU tests check every kernel against its twin. Keep this small:
a kernel belongs here only when it replaces several passes over memory with one.
"""
from __future__ import annotations

import cupy

from ._cuda_sources import (BF16_TO_F32_BODY, F32_TO_BF16_BODY, RELU_BODY, RUN_PRODUCT_BODY,
                            WHERE_BODY)

where = cupy.ElementwiseKernel("bool c, T a, T b", "T out", WHERE_BODY, "dispatchtorch_where")
relu = cupy.ElementwiseKernel("T x", "T out", RELU_BODY, "dispatchtorch_relu")
run_product = cupy.ElementwiseKernel("raw int64 ts, raw T vs, int64 count", "raw T flat",
                                     RUN_PRODUCT_BODY, "dispatchtorch_run_product")
bf16_to_f32 = cupy.ElementwiseKernel("uint16 b", "float32 f", BF16_TO_F32_BODY,
                                     "dispatchtorch_bf16_to_f32")
f32_to_bf16 = cupy.ElementwiseKernel("float32 f", "uint16 b", F32_TO_BF16_BODY,
                                     "dispatchtorch_f32_to_bf16")
