"""A backend whose `neg` kernel kills the interpreter and whose `sin` kernel hangs,
for the suite's --isolate tests. Everything else is the CPU backend's."""
import os
import signal
import time

from dispatchtorch.backend import hookimpl
from dispatchtorch_cpu.backend import CPUBackend
from dispatchtorch_cpu.kernels import KERNELS


def neg_crashing(out, x):
    os.kill(os.getpid(), signal.SIGSEGV)


def sin_hanging(out, x):
    time.sleep(3600)


class CrashyBackend(CPUBackend):
    name = "crashy"
    kernels = {**KERNELS, "neg": neg_crashing, "sin": sin_hanging}


@hookimpl
def dispatchtorch_backend():
    return CrashyBackend()
