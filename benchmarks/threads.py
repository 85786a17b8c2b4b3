"""Thread settings a case runs under: each library's own default (what a user gets)
and a fixed count for every library (what compares the kernels themselves).

All libraries share one process, and numpy's OpenBLAS is shared by numpy and by
dispatchtorch's CPU backend (which keeps it on one thread at rest and raises it to its
pool's thread count only around its large GEMMs and sums, blas_threads.py). So a
setting is applied per framework just before each of its batches (never inside the
timed region): numpy gets its BLAS threads, PyTorch its intra-op threads, and
dispatchtorch its CPU pool with BLAS resting on one thread, as its backend sets it: at
`1 thread` the pool has one thread and BLAS never leaves one.
"""
from __future__ import annotations

import os


class BlasControl:
    """numpy's BLAS thread count (threadpoolctl), or nothing when it is missing."""

    def __init__(self):
        self.libs = []
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return
        import numpy
        root = os.path.dirname(os.path.dirname(numpy.__file__))
        self.libs = [lib for lib in ThreadpoolController().lib_controllers
                     if lib.user_api == "blas" and lib.filepath.startswith(root)
                     and "torch" not in lib.filepath]

    def get(self):
        return max((lib.get_num_threads() for lib in self.libs), default=None)

    def set(self, n):
        for lib in self.libs:
            if lib.get_num_threads() != n:
                lib.set_num_threads(n)


def library_defaults():
    """numpy's own BLAS thread count (OpenBLAS: the environment's setting, else one per
    core); PyTorch's and dispatchtorch's are read from them (settings_for)."""
    env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    return {"numpy": int(env) if env else (os.cpu_count() or 1)}


class ThreadSetting:
    """`threads` 0: every library's default; n: n threads for every library."""

    def __init__(self, threads, defaults, blas):
        self.threads = threads
        self.defaults = defaults
        self.blas = blas
        self.label = "default" if threads == 0 else f"{threads} thread" + ("s" * (threads > 1))

    def __repr__(self):
        return f"<threads {self.label}>"

    def count(self, fw):
        """The threads `fw` runs with under this setting."""
        return self.threads or self.defaults.get(fw.label, self.defaults.get(fw.kind, 1))

    def activation(self, fw):
        n = self.count(fw)
        blas = self.blas
        if fw.kind == "numpy":
            return lambda: blas.set(n)
        if fw.kind == "torch":
            torch = fw.mod

            def activate():
                blas.set(n)
                if torch.get_num_threads() != n:
                    torch.set_num_threads(n)
            return activate
        mod = fw.mod

        def ours():
            blas.set(1)                      # the CPU backend's resting setting (blas_threads.py)
            if mod.get_num_threads() != n:
                mod.set_num_threads(n)
        return ours


def settings_for(spec, frameworks, blas, defaults):
    """ThreadSettings for a comma-separated spec such as '0,1'."""
    for fw in frameworks:
        if fw.kind == "torch":
            defaults.setdefault("torch", fw.mod.get_num_threads())
        elif fw.is_ours:
            defaults.setdefault("dispatchtorch", fw.mod.get_num_threads())
    counts = [int(x) for x in str(spec).split(",") if x.strip()]
    if any(c < 0 for c in counts) or not counts:
        raise ValueError(f"--threads: expected counts >= 0 (0: each library's default), "
                         f"got {spec!r}")
    return [ThreadSetting(c, defaults, blas) for c in counts]
