"""Backend discovery through entry points, lazy loading, validation and status.

A backend is loaded the first time its device type is used (or when all are
listed), so `import dispatchtorch` never imports a driver. A plugin that raises
(SystemExit included), hangs at import, returns garbage or targets another API
version is recorded as failed with the reason; it never breaks the import or the
other backends. The reference `cpu` always comes from this project's own package: a
second distribution registering `cpu` is reported and ignored.
"""
from __future__ import annotations

import os
import threading
import traceback
import warnings
from importlib import metadata

import pluggy

from ..backend import hookspecs
from ..backend import contract
from ..backend.contract import Backend, BackendError, compatible, parse_version
from ..backend.prims import MEMORY_METHODS, PRIMS
from .registry import OPS

REFERENCE = "cpu"
REFERENCE_MODULE = "dispatchtorch_cpu"     # the reference's own package (backends/cpu)
# seconds a plugin's import may take before it is reported as hung and skipped
IMPORT_TIMEOUT_ENV = "DISPATCHTORCH_PLUGIN_IMPORT_TIMEOUT"
DEFAULT_IMPORT_TIMEOUT = 60.0


class BackendRuntime:
    """A backend as the core sees it: the object, its status and what it lacks."""

    def __init__(self, name, dist="", version=""):
        self.name = name
        self.dist, self.version = dist, version
        self.status = "failed"          # ready | unavailable | failed
        self.api_version = None         # what the backend declares, once it was created
        self.error = ""
        self.backend: Backend | None = None
        self.kernels = {}
        self.devices = []
        self.missing_prims: list[str] = []
        self.unknown_ops: list[str] = []
        self.fallbacks: set[str] = set()
        self.is_reference = name == REFERENCE

    def __repr__(self):
        return f"<backend {self.name} {self.status}>"

    def device_info(self, index):
        if self.status != "ready":
            raise RuntimeError(f"device '{self.name}' is not usable: {self.status}: {self.error}")
        if index >= len(self.devices):
            have = ", ".join(f"{self.name}:{d.index}" for d in self.devices)
            raise RuntimeError(f"device '{self.name}:{index}' does not exist; backend '{self.name}' "
                               f"has {len(self.devices)} device(s): {have}")
        return self.devices[index]

    def as_dict(self):
        api = self.api_version
        return {"name": self.name, "distribution": self.dist, "version": self.version,
                "api_version": _fmt(api) if api else "", "status": self.status, "error": self.error,
                "devices": [{"index": d.index, "name": d.name, "dtypes": sorted(d.dtypes),
                             "properties": dict(d.properties)} for d in self.devices],
                "missing_prims": self.missing_prims, "unknown_ops": self.unknown_ops,
                "composite_kernels": sorted(k for k in self.kernels if k not in PRIMS)}


_runtimes: dict[str, BackendRuntime] = {}
_LOCKS_LOCK = threading.Lock()
_LOAD_LOCKS: dict[str, threading.Lock] = {}
_entry_points: dict[str, list] | None = None
_installed_types: list = []      # every registered name, found with _entry_points
_pm: pluggy.PluginManager | None = None


def _plugin_manager():
    global _pm
    if _pm is None:
        _pm = pluggy.PluginManager(hookspecs.PROJECT)
        _pm.add_hookspecs(hookspecs)
    return _pm


def _allowed():
    env = os.environ.get("DISPATCHTORCH_BACKENDS", "").strip()
    if not env:
        return None
    names = {n.strip() for n in env.split(",") if n.strip()}
    return names | {REFERENCE}        # the reference is always there: fallback needs it


def _discover():
    global _entry_points, _installed_types
    if _entry_points is None:
        allowed = _allowed()
        found, every = {}, set()
        for ep in metadata.entry_points(group=hookspecs.ENTRY_POINT_GROUP):
            every.add(ep.name)
            if allowed is None or ep.name in allowed:
                eps = found.setdefault(ep.name, [])
                if all(e.value != ep.value for e in eps):   # one package seen twice on the path
                    eps.append(ep)
        _entry_points, _installed_types = found, sorted(every)
    return _entry_points


def available_names():
    """Device types with an installed (not necessarily loadable) backend."""
    return sorted(_discover())


def installed_types():
    """Every device type an installed backend registers, DISPATCHTORCH_BACKENDS or not:
    torch.device accepts them all, and using an excluded one says why it is not loaded."""
    _discover()
    return _installed_types


def is_loaded(name):
    """Whether a backend runtime of this device type exists in this process (loaded from
    an entry point, or adopted at run time by a test without one)."""
    return name in _runtimes


# what the layers above keep per loaded backend (the interned places) and must forget with it
_reset_callbacks: list = []


def on_reset(callback):
    """Call callback() whenever reset_backends() forgets the loaded backends: the frontend
    registers here, so the loader never imports the layers above it."""
    _reset_callbacks.append(callback)
    return callback


def reset_backends():
    """Forget everything loaded (tests install backends at run time)."""
    global _entry_points, _pm
    _runtimes.clear()
    _entry_points = None
    _pm = None
    for op in OPS.values():
        op.kernels.clear()
    for callback in _reset_callbacks:
        callback()


# the backends this repository ships, and how to add each (not on the package index yet)
_INSTALL_HINTS = {"opencl": 'pip install "./backends/opencl[pocl]"',
                  "cuda": 'pip install "./backends/cuda[cuda12]"'}


def get_backend(name: str) -> BackendRuntime:
    """The runtime for a device type, loading it on first use; raises if unknown."""
    rt = _runtimes.get(name)
    if rt is None:
        # two threads' first ops must share one runtime (one context per device); a lock
        # per name, so a plugin that uses another backend while it imports can load it
        with _LOCKS_LOCK:
            lock = _LOAD_LOCKS.setdefault(name, threading.Lock())
        with lock:
            rt = _runtimes.get(name) or _load_named(name)
    return rt


def _load_named(name):
    eps = _discover().get(name)
    if not eps:
        installed = ", ".join(available_names()) or "none"
        hint = "" if _allowed() is None or name in _allowed() else \
            " (DISPATCHTORCH_BACKENDS excludes it)"
        if not hint and name in _INSTALL_HINTS:
            hint = f" (from a checkout of dispatchtorch: {_INSTALL_HINTS[name]})"
        raise RuntimeError(f"no backend is installed for device type '{name}'{hint}; "
                           f"installed: {installed}")
    rt = _runtimes[name] = _load(name, eps)
    return rt


def list_backends() -> list[BackendRuntime]:
    return [get_backend(n) for n in available_names()]


def loaded_backends() -> list[BackendRuntime]:
    return list(_runtimes.values())


def _dist_name(ep):
    dist = getattr(ep, "dist", None)
    return dist.name if dist else "?"


def _choose(name, eps):
    """The entry point to use, and the others (reported, ignored). The reference comes
    from this project's own package whatever else registers its name."""
    if name == REFERENCE:
        own = [e for e in eps if e.module == REFERENCE_MODULE]
        if own:
            return own[0], [e for e in eps if e is not own[0]]
    return eps[0], list(eps[1:])


def _import_timeout():
    try:
        return float(os.environ.get(IMPORT_TIMEOUT_ENV, DEFAULT_IMPORT_TIMEOUT))
    except ValueError:
        return DEFAULT_IMPORT_TIMEOUT


def _import_plugin(ep):
    """ep.load() in a worker thread, waited for at most the import timeout: a plugin
    that hangs at import is reported instead of hanging the program (the thread is a
    daemon and is left behind). SystemExit from the plugin is returned as an error."""
    box = {}

    def run():
        try:
            box["plugin"] = ep.load()
        except BaseException as exc:     # SystemExit too: reported by the caller
            box["error"] = exc
    worker = threading.Thread(target=run, name=f"dispatchtorch-import-{ep.name}", daemon=True)
    worker.start()
    timeout = _import_timeout()
    worker.join(timeout)
    if worker.is_alive():
        raise BackendError(f"importing plugin {ep.value} did not finish within {timeout:g} s "
                           f"(set {IMPORT_TIMEOUT_ENV} to wait longer); skipped")
    exc = box.get("error")
    if exc is not None:
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        if isinstance(exc, SystemExit):
            raise BackendError(f"plugin {ep.value} called sys.exit({exc.code!r}) at import")
        raise exc
    return box["plugin"]


def _load(name, eps) -> BackendRuntime:
    ep, ignored = _choose(name, eps)
    dist = getattr(ep, "dist", None)
    rt = BackendRuntime(name, dist.name if dist else "", dist.version if dist else "")
    if ignored:
        others = ", ".join(f"{e.value} ({_dist_name(e)})" for e in ignored)
        rt.error = (f"several distributions register '{name}'; using {ep.value} "
                    f"({_dist_name(ep)}), ignoring {others}. ")
        rt.ignored = [{"entry_point": e.value, "distribution": _dist_name(e)} for e in ignored]
        warnings.warn(f"dispatchtorch: {rt.error.strip()}", RuntimeWarning, stacklevel=3)
    try:
        plugin = _import_plugin(ep)
        pm = _plugin_manager()
        pm.register(plugin, name=f"{name}:{ep.value}")
        caller = pm.subset_hook_caller("dispatchtorch_backend",
                                       remove_plugins=[p for p in pm.get_plugins() if p is not plugin])
        results = caller()
        if len(results) != 1:
            raise BackendError(f"plugin {ep.value} returned {len(results)} backends from "
                               f"dispatchtorch_backend; expected exactly one")
        _adopt(rt, results[0])
    except (Exception, SystemExit) as exc:   # a broken plugin is reported, never raised
        rt.status = "failed"
        rt.error += f"{type(exc).__name__}: {exc}"
        rt.traceback = traceback.format_exc()
    return rt


def _adopt(rt, backend):
    if not isinstance(backend, Backend):
        raise BackendError(f"dispatchtorch_backend returned {type(backend).__name__}, "
                           f"not a dispatchtorch.backend.Backend")
    rt.api_version = backend.api_version
    if backend.name != rt.name:
        raise BackendError(f"the backend calls itself {backend.name!r} but its entry point is "
                           f"named {rt.name!r}; they must match")
    _check_api_version(rt.name, backend)
    missing_memory = [m for m in MEMORY_METHODS
                      if getattr(type(backend), m, None) is getattr(Backend, m)]
    if missing_memory:
        raise BackendError(f"backend '{rt.name}' does not implement the required memory "
                           f"methods: {', '.join(missing_memory)}")
    kernels = dict(backend.kernels)
    bad = [k for k, v in kernels.items() if not callable(v)]
    if bad:
        raise BackendError(f"backend '{rt.name}' has non-callable kernels: {', '.join(sorted(bad))}")
    # a prim of the catalogue is known even before the ops layer declares its row
    rt.unknown_ops = sorted(k for k in kernels if k not in OPS and k not in PRIMS)
    for k in rt.unknown_ops:
        del kernels[k]
    rt.missing_prims = sorted(p for p in PRIMS if p not in kernels)
    rt.backend, rt.kernels = backend, kernels
    devices = list(backend.devices())
    rt.devices = devices
    if devices:
        rt.status = "ready"
    else:
        rt.status = "unavailable"
        rt.error += backend.unavailable_reason or "the backend reports no devices"


def _check_api_version(name, backend):
    core = contract.API_VERSION
    declared = backend.api_version
    if declared is None:
        raise BackendError(f"backend '{name}' does not declare the backend API version it was "
                           f"built for; set `api_version = ({core[0]}, {core[1]})` (a literal: the "
                           f"dispatchtorch.backend.API_VERSION it was written against) on its "
                           f"Backend class")
    if parse_version(declared) is None:
        raise BackendError(f"backend '{name}' declares api_version {declared!r}; expected a "
                           f"(major, minor) pair of ints such as ({core[0]}, {core[1]})")
    if not compatible(declared, core):
        newer = declared[0] == core[0]
        fix = (f"upgrade dispatchtorch to one that provides {_fmt(declared)}" if newer else
               f"install a '{name}' backend built for backend API {core[0]}.x" if declared[0] < core[0]
               else f"install a '{name}' backend built for backend API {core[0]}.x, or a "
                    f"dispatchtorch that provides {declared[0]}.x")
        raise BackendError(f"backend '{name}' was built for backend API version {_fmt(declared)}, "
                           f"but this dispatchtorch provides {_fmt(core)}; {fix}")


def _fmt(v):
    try:
        return ".".join(str(x) for x in v)
    except TypeError:
        return repr(v)
