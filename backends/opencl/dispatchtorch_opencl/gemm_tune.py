"""Per-shape GEMM autotuning for `dispatchtorch.compile(mode="max-autotune")`
(`Backend.tune_kernel`).

Eager calls pick a GEMM kernel by layout and size rules measured once on some machine
(matmul.py, matmul_direct.py). A compiled graph's call sites have fixed layouts, so the
first call of each times a few forced variants on its real operands (the direct
in-place kernels, the packed ones, b read in place, work-group sizes: see
`candidates`) and later calls run the fastest; the choice is kept per device in
`$DISPATCHTORCH_CACHE_DIR/opencl-gemm/` (default ~/.cache/dispatchtorch), so the next
process times nothing. Every variant computes each output as the same sequential sum
over k. A variant that fails to launch is skipped; a remembered one that fails later
is dropped and the heuristic kernel runs; a variant must beat the heuristic by MARGIN
twice (all candidates, then it and the heuristic again), or the heuristic stays:
timings on a shared CPU are noisy.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time

from .kernels.linear import linear, linear_relu
from .kernels.matmul import VARIANTS, matmul

# the kernels a call site may be tuned for, by what their operands are
_KINDS = {matmul: "matmul", linear: "linear", linear_relu: "linear_relu"}
MIN_WORK = 1 << 20     # multiply-adds: smaller products are launch-bound, not tuned
ROUNDS = 5             # timed calls of each variant (interleaved; the best counts)
MARGIN = 0.97          # a variant replaces the heuristic only if this much faster
LOCALS = (8, 32)       # work-group sizes tried along the main kernel's first grid dim

_lock = threading.Lock()
_choices: dict = {}    # cache file path -> {layout key: [variant, local] or None}
STATS = {"timed": 0, "remembered": 0}    # call sites timed / served from the cache


def tune_kernel(op, kernel):
    """A step for `kernel` that tunes itself on its first call, or None where the
    kernel is not a GEMM this module knows."""
    kind = _KINDS.get(kernel)
    if kind is None:
        return None
    return _Site(kind, kernel)


class _Site:
    """One call site: on the first call, the choice for its layout (timed, or from the
    cache); then every call with that layout runs it, any other the plain kernel."""

    def __init__(self, kind, kernel):
        self.kind, self.kernel = kind, kernel
        self.layout = self.choice = None
        self.decided = False

    def __call__(self, *hs):
        if not self.decided:
            self._decide(hs)
        if self.choice is not None and _layout(hs) == self.layout:
            variant, local = self.choice
            try:
                return self.kernel(*hs, variant=variant, local=local)
            except Exception:                 # (a remembered variant this driver rejects)
                self.choice = None
                _forget(hs[0].dev, repr((self.kind, self.layout)))
        return self.kernel(*hs)

    def _decide(self, hs):
        self.decided = True
        self.layout = _layout(hs)
        if hs[0].dtype not in ("float32", "float64") or hs[0].dev.matmul_path != "direct" \
                or _work(hs) < MIN_WORK or _aliased(hs):
            return                 # (the variants are the CPU kernels' float32/float64 ones)
        dev = hs[0].dev
        path = _cache_path(dev)
        key = repr((self.kind, self.layout))
        table = _table(path)
        if key in table:
            STATS["remembered"] += 1
            self.choice = _valid(table[key])
            return
        STATS["timed"] += 1
        self.choice = time_variants(self.kernel, hs, candidates(self.kind, hs))
        _remember(path, key, self.choice)


def candidates(kind, hs):
    """(variant, local) pairs to time beside the heuristic (None, None)."""
    out = [(v, None) for v in VARIANTS]
    out += [(v, (n, 1, 1)) for v in ("direct", "packed") for n in LOCALS]
    return out


def time_variants(kernel, hs, cands):
    """The fastest of cands on these operands, or None where none beats the heuristic
    by MARGIN (wall time of one synchronised call, best of ROUNDS)."""
    dev = hs[0].dev
    runs = {None: lambda: kernel(*hs)}
    for c in cands:
        run = (lambda c=c: kernel(*hs, variant=c[0], local=c[1]))
        try:
            run()                      # builds its kernels; a layout it refuses raises
            dev.synchronize()
        except Exception:
            dev.synchronize()
            continue
        runs[c] = run
    best = _best(dev, runs)
    top = min(best, key=best.get)
    if top is None or best[top] > MARGIN * best[None]:
        return None
    # timed again against the heuristic alone: a load spike during the first rounds
    # must not be remembered as a winner
    again = _best(dev, {None: runs[None], top: runs[top]})
    return top if again[top] <= MARGIN * again[None] else None


def _best(dev, runs):
    """{candidate: its best wall time of ROUNDS synchronised calls}, interleaved."""
    best = {c: float("inf") for c in runs}
    for _ in range(ROUNDS):
        for c, run in runs.items():
            dev.synchronize()
            t = time.perf_counter()
            run()
            dev.synchronize()
            best[c] = min(best[c], time.perf_counter() - t)
    return best


def _layout(hs):
    return tuple(None if h is None else (h.dtype, h.shape, h.strides) for h in hs)


def _work(hs):
    """Multiply-adds: the output's size times k (a's last dim, linear's x's too)."""
    return hs[0].size * hs[1].shape[-1]


def _aliased(hs):
    """Whether the output shares a buffer with an input (timing would change it)."""
    out = hs[0]
    return any(h is not None and h.buf is not None and h.buf == out.buf for h in hs[1:])


def _valid(entry):
    """A remembered [variant, local] as a choice, or None where it is not one."""
    if entry is None or not isinstance(entry, list) or len(entry) != 2:
        return None
    variant, local = entry
    if variant not in VARIANTS:
        return None
    if local is not None:
        if not (isinstance(local, list) and 1 <= len(local) <= 3
                and all(isinstance(n, int) and n > 0 for n in local)):
            return None
        local = tuple(local)
    return variant, local


# -- the on-disk choices, one JSON file per device identity ---------------------------

def _cache_path(dev):
    d = dev.dev
    ident = "|".join([dev.platform.name.strip(), dev.platform.version.strip(), dev.name,
                      d.version.strip(), d.driver_version.strip(), str(dev.compute_units),
                      os.environ.get("POCL_MAX_PTHREAD_COUNT", ""),
                      os.environ.get("POCL_CPU_MAX_CU_COUNT", "")])
    root = os.environ.get("DISPATCHTORCH_CACHE_DIR") or \
        os.path.join(os.path.expanduser("~"), ".cache", "dispatchtorch")
    name = hashlib.sha256(ident.encode()).hexdigest()[:20]
    return os.path.join(root, "opencl-gemm", name + ".json")


def _table(path):
    with _lock:
        t = _choices.get(path)
        if t is None:
            t = _choices[path] = _read(path)
        return t


def _read(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _remember(path, key, choice):
    entry = None if choice is None else [choice[0], None if choice[1] is None else list(choice[1])]
    with _lock:
        _choices.setdefault(path, {})[key] = entry
        _write(path, key, entry)


def _forget(dev, key):
    path = _cache_path(dev)
    with _lock:
        _choices.setdefault(path, {})[key] = None
        _write(path, key, None)


def _write(path, key, entry):
    """Merge one entry into the file (another process may have added others)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = _read(path)
        data[key] = entry
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=0, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass                      # (a read-only cache: the choice lives in memory only)


def clear_memory():
    """Forget the choices read from disk (tests: the next site reads the file again)."""
    with _lock:
        _choices.clear()
