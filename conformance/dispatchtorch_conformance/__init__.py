"""dispatchtorch-conformance: is this backend right, op by op, dtype by dtype?

    dispatchtorch-conformance --backend opencl
    pytest --pyargs dispatchtorch_conformance --dispatchtorch-backend opencl

The case format (for adding an op's sample inputs) is `Case`, `Sample`, `Arr`,
`Tol` and the generators in `dispatchtorch_conformance.samples`; see README.md.
Importing this package stays cheap (the pytest plugin lives in it): the names
below load on first use.
"""
__version__ = "0.1.0"

_LAZY = {"Case": "case", "Sample": "case", "Arr": "case", "Tol": "case", "Gen": "case",
         "samples": None, "Target": "runner", "run_cell": "runner", "all_cases": "cases"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'dispatchtorch_conformance' has no attribute '{name}'")
    import importlib
    mod = _LAZY[name]
    if mod is None:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{mod}", __name__), name)


__all__ = ["__version__", *_LAZY]
