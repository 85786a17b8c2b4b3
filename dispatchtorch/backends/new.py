"""`dispatchtorch-backends new NAME`: a new backend package, ready to install and run.

The files come from template/ (`*.tmpl`, placeholders `__NAME__` and friends): a
pyproject with the entry point, a Backend whose kernels delegate to numpy, a test
that runs the conformance suite against it, and a GitHub Actions workflow that runs
the suite and diffs its report against main's.
"""
from __future__ import annotations

import keyword
import re
from importlib import resources
from pathlib import Path

from .. import __version__
from ..backend import API_VERSION

RESERVED = frozenset({"cpu", "meta", "cuda", "opencl"})
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class TemplateError(ValueError):
    """A name or target directory the template cannot use; the message says why."""


def check_name(name: str) -> None:
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise TemplateError(f"backend name {name!r} must be a lowercase Python identifier "
                            f"(letters, digits, underscores; starting with a letter): it is the "
                            f"device type users write, as in tensor.to('{name.lower()}')")
    if name in RESERVED:
        raise TemplateError(f"backend name {name!r} is taken by a backend dispatchtorch ships "
                            f"({', '.join(sorted(RESERVED))}); choose another")


def placeholders(name: str) -> dict:
    core = ".".join(__version__.split(".")[:2])
    return {
        "__NAME__": name,
        "__PACKAGE__": f"dispatchtorch_{name}",
        "__DIST__": f"dispatchtorch-{name.replace('_', '-')}",
        "__CLASS__": "".join(part.capitalize() for part in name.split("_")),
        "__API_VERSION__": f"({API_VERSION[0]}, {API_VERSION[1]})",
        "__CORE_VERSION__": core,
    }


def _template_files():
    """(relative path with placeholders, text) for every file of the template."""
    root = resources.files(__package__).joinpath("template")
    stack = [(root, "")]
    while stack:
        folder, rel = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    stack.append((entry, f"{rel}{entry.name}/"))
            elif entry.name.endswith(".tmpl"):
                yield rel + entry.name[:-len(".tmpl")], entry.read_text()


def render(name: str) -> dict:
    """{relative path: text} of the package for backend `name` (nothing written)."""
    check_name(name)
    subs = placeholders(name)
    files = {}
    for rel, text in _template_files():
        rel = rel.replace("package/", subs["__PACKAGE__"] + "/", 1)
        if rel.startswith("github/"):          # (a dot-folder would not be package data)
            rel = ".github/workflows/" + rel[len("github/"):]
        for key, value in subs.items():
            text = text.replace(key, value)
        files[rel] = text
    return files


def create(name: str, directory=".") -> Path:
    """Write the package for backend `name` as `directory/dispatchtorch-NAME`; returns it."""
    files = render(name)
    target = Path(directory) / placeholders(name)["__DIST__"]
    if target.exists():
        raise TemplateError(f"{target} already exists; remove it or choose another --dir")
    for rel, text in sorted(files.items()):
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return target
