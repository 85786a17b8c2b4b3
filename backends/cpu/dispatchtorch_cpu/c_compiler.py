"""Generated C for the CPU backend's compiled regions: the system C compiler, a disk cache.

numpy cannot fuse: every ufunc call is one pass over memory, and a tile loop (fusion.py)
still runs one pass per op over cache. A loop the C compiler vectorises keeps a region's
values in registers: `exp(x*y + z)*x - y` on 4M float32 at one thread took 2.8 ms as
one C loop against 5.2 ms tiled and 7.5 ms eager. PyTorch's inductor does the same with
its C++ compiler. Transcendentals vectorise through glibc's libmvec (`#pragma omp
declare simd`): within 4 ulp as numpy's own loops are, not bit-equal to them.

Optional: no compiler (or `DISPATCHTORCH_CPU_CC=0`) and regions run as tiles. The
compiled library is cached under `DISPATCHTORCH_CACHE_DIR` (default
~/.cache/dispatchtorch) by a hash of the source, the compiler and this CPU's flags
(`-march=native` code runs only where it was built).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

FLAGS = ("-O3", "-march=native", "-fopenmp-simd", "-fno-math-errno", "-ffp-contract=off",
         "-fPIC", "-shared")
# -ffp-contract=off: no fused multiply-add where the source has a multiply and an add
# (numpy rounds after each); -fno-math-errno: sqrt and the libmvec calls set no errno

_lock = threading.Lock()
_state: dict = {}


def compiler():
    """The C compiler's path, or None (absent, or turned off by DISPATCHTORCH_CPU_CC=0)."""
    choice = os.environ.get("DISPATCHTORCH_CPU_CC")
    if choice is not None and choice.strip() in ("", "0"):
        return None
    return shutil.which(choice or "cc") or (None if choice else shutil.which("gcc"))


def _identity(cc):
    """What a cached library depends on besides its source: the compiler and the CPU."""
    key = _state.get(("identity", cc))
    if key is None:
        try:
            version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                     timeout=30).stdout.splitlines()[:1]
        except (OSError, subprocess.SubprocessError):
            version = []
        try:
            with open("/proc/cpuinfo") as f:
                cpu = [ln for ln in f if ln.startswith(("flags", "model name"))][:2]
        except OSError:
            cpu = []
        key = _state[("identity", cc)] = "|".join([cc, *version, *cpu, *FLAGS])
    return key


def _cache_dir():
    """The cache folder, made if needed; a per-user one under the temporary directory
    where the configured one cannot be written (a read-only home); None if neither can."""
    root = os.environ.get("DISPATCHTORCH_CACHE_DIR") or \
        os.path.join(os.path.expanduser("~"), ".cache", "dispatchtorch")
    for folder in (os.path.join(root, "cpu-c"),
                   os.path.join(tempfile.gettempdir(), f"dispatchtorch-{os.getuid()}", "cpu-c")):
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return None


def simd_functions():
    """libm functions with vector variants in this machine's libmvec, by C name (expf,
    exp, ...): only these may be declared `omp declare simd`; a loop calling any other
    function would stay scalar, slower than numpy."""
    found = _state.get("simd")
    if found is None:
        found = set()
        path = ctypes.util.find_library("mvec")
        lib = None
        if path:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                lib = None
        if lib is not None:
            for name, arity, widths in _CANDIDATES:
                # every ISA gcc may pick (SSE4, AVX, AVX2, AVX-512) must be there
                if all(hasattr(lib, f"_ZGV{isa}N{w}{'v' * arity}_{name}")
                       for isa, w in zip("bcde", widths)):
                    found.add(name)
        _state["simd"] = found
    return found


_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
          "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc")
_CANDIDATES = [(n + "f", 1, (4, 8, 8, 16)) for n in _UNARY] + \
              [(n, 1, (2, 4, 4, 8)) for n in _UNARY] + \
              [("powf", 2, (4, 8, 8, 16)), ("pow", 2, (2, 4, 4, 8)),
               ("atan2f", 2, (4, 8, 8, 16)), ("atan2", 2, (2, 4, 4, 8))]


def load(source, openmp=False, extra_flags=()):
    """The shared library built from C `source` (cached on disk and in this process),
    or None without a compiler. A source the compiler rejects raises: it is generated,
    so that is a bug to see, not to hide. `openmp`: `#pragma omp parallel` runs on
    libgomp's threads where the compiler links it; elsewhere the pragma is ignored and
    the loop runs on the calling thread (a source must give the same bits either way).
    `extra_flags`: more compiler flags for this source (part of the cache key)."""
    cc = compiler()
    if cc is None:
        return None
    flags = FLAGS + tuple(extra_flags) + (("-fopenmp",) if openmp and _links_openmp(cc) else ())
    key = hashlib.sha256(f"{_identity(cc)}|{' '.join(flags)}\n{source}".encode()).hexdigest()[:32]
    lib = _state.get(key)
    if lib is not None:
        return lib
    with _lock:
        lib = _state.get(key)
        if lib is None:
            folder = _cache_dir()
            if folder is None:
                return None           # nowhere to build: as without a compiler
            lib = _state[key] = ctypes.CDLL(_built(folder, cc, key, source, flags))
    return lib


def _links_openmp(cc):
    """Whether cc builds and links `-fopenmp` (libgomp may be absent)."""
    ok = _state.get(("openmp", cc))
    if ok is None:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write("#include <omp.h>\nint threads(void) { return omp_get_max_threads(); }\n")
            try:
                ok = subprocess.run([cc, *FLAGS, "-fopenmp", "-o", os.path.join(tmp, "p.so"),
                                     src], capture_output=True, timeout=60).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _state[("openmp", cc)] = ok
    return ok


def _built(folder, cc, key, source, flags):
    """The library's path in the cache, compiling it first if it is not there. Written
    to a temporary name and renamed: processes sharing the cache (MPI ranks, pytest
    workers) never load a half-written file."""
    path = os.path.join(folder, f"{key}.so")
    if os.path.exists(path):
        return path
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src, out = os.path.join(tmp, "k.c"), os.path.join(tmp, "k.so")
        with open(src, "w") as f:
            f.write(source)
        done = subprocess.run([cc, *flags, "-o", out, src, "-lm"], capture_output=True,
                              text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"dispatchtorch cpu: the C compiler {cc} rejected a generated "
                               f"kernel:\n{done.stderr[-4000:]}\n--- source ---\n{source}")
        os.replace(out, path)
    return path
