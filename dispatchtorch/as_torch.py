"""Run a PyTorch program unchanged on dispatchtorch: `import torch` (and every
`torch.X` submodule) resolves to dispatchtorch (`dispatchtorch.X`).

    python -m dispatchtorch.as_torch program.py [args ...]

or call install() before the program's first `import torch`. Opt-in and per process:
a package that needs PyTorch's C extensions (torchvision's ops, torchtext) will not
work through it; pure-Python code written against torch's public API does. A `torch.X`
that dispatchtorch has not raises ModuleNotFoundError naming `dispatchtorch.X`."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys

__all__ = ["install", "uninstall"]


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch` / `torch.X`; the module object is dispatchtorch's own, so
    `torch.nn is dispatchtorch.nn` and isinstance checks agree across the two names."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("dispatch" + spec.name)

    def exec_module(self, module):
        pass                                  # already executed under its own name


_FINDER = _TorchAlias()


def install():
    """Make later `import torch` statements load dispatchtorch."""
    loaded = [n for n in sys.modules if n == "torch" or n.startswith("torch.")]
    if loaded and not getattr(sys.modules.get("torch"), "__name__", "").startswith("dispatch"):
        raise RuntimeError("as_torch.install: PyTorch is already imported in this process "
                           f"({loaded[0]}); install before the first `import torch`")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Stop aliasing (modules already imported as torch.* stay in sys.modules)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
