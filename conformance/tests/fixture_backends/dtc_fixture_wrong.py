"""A deliberately wrong backend, for the conformance suite's own tests.

Numpy memory (the CPU backend's) with four broken kernels: `add` is off by 1000
ulp, `sum` ignores keepdim, `exp` raises, and `relu` (a composite op, given a
kernel of its own here) writes into its input. It lacks `cos` and `matmul`, so
those fall back to the CPU, and it does not claim int16.
"""
import numpy as np
from dispatchtorch.backend import DTYPE_NAMES, DeviceInfo, hookimpl
from dispatchtorch_cpu.backend import CPUBackend
from dispatchtorch_cpu.kernels import KERNELS

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def add_off_by_1000_ulp(out, a, b):
    KERNELS["add"](out, a, b)
    if out.dtype == np.bool_:
        return
    if out.dtype.kind in "iu":
        out += np.asarray(1000).astype(out.dtype)            # wraps, like a C kernel
        return
    bits = out.view(_UINT[out.dtype.itemsize])
    finite = np.isfinite(out.astype(np.float32))
    bits[finite] += np.asarray(1000).astype(bits.dtype)      # 1000 steps away from zero


def sum_ignoring_keepdim(out, x, *, dims, keepdim):
    acc = np.float32 if out.dtype.itemsize == 2 and out.dtype.kind != "i" else out.dtype
    r = np.sum(x.astype(acc) if acc is np.float32 else x, axis=dims, dtype=acc)
    np.copyto(out, r, casting="unsafe")       # as if keepdim were False: broadcasts or raises


def exp_raising(out, x):
    raise RuntimeError("exp kernel exploded")


def relu_writing_its_input(out, x):
    np.maximum(x, np.zeros((), x.dtype), out=x)
    out[...] = x


class WrongBackend(CPUBackend):
    name = "fixture"
    kernels = {**{k: v for k, v in KERNELS.items() if k not in ("cos", "matmul")},
               "add": add_off_by_1000_ulp, "sum": sum_ignoring_keepdim, "exp": exp_raising,
               "relu": relu_writing_its_input}

    def devices(self):
        return [DeviceInfo(0, "fixture device (numpy)", frozenset(DTYPE_NAMES) - {"int16"})]


@hookimpl
def dispatchtorch_backend():
    return WrongBackend()
