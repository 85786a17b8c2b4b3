"""torch.hub: entrypoints from a repo's `hubconf.py` (a GitHub repo or a local directory)
and checkpoints from URLs, with PyTorch's cache layout so both libraries share downloads.
See docs/dropin.md ("torch.hub")."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys

from ._download import (HASH_REGEX, READ_DATA_CHUNK, download_url_to_file, get_dir,  # noqa: F401
                        load_state_dict_from_url, set_dir)
from ._github import get_cache_or_reload

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)        # hubconf.py imports its repo's own modules
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attr(module, name):
    return getattr(module, name) if name in dir(module) else None


def _entry(module, model):
    """The callable `model` of a hubconf, after its `dependencies` are all importable."""
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = _attr(module, VAR_DEPENDENCY)
    if deps is not None:
        missing = [pkg for pkg in deps if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = _attr(module, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_hubconf(repo_dir)


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """The entrypoints of a GitHub repo's hubconf.py: its public callables."""
    module = _hubconf(get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                          skip_validation=skip_validation))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """The docstring of entrypoint `model` of a GitHub repo's hubconf.py."""
    module = _hubconf(get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                          skip_validation=skip_validation))
    return _entry(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entrypoint `model` of the hubconf.py of `repo_or_dir` ('owner/repo[:ref]' for
    source='github', a directory for source='local') with `*args, **kwargs`."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                          verbose=verbose, skip_validation=skip_validation)
    with _add_to_sys_path(repo_or_dir):
        return _entry(_import_hubconf(repo_or_dir), model)(*args, **kwargs)

