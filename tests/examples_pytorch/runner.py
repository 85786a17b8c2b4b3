"""Load an example program for dispatchtorch (as written) or for PyTorch (its
`dispatchtorch` imports read as `torch`), and time a run."""
from __future__ import annotations


import os
import re
import sys
import time
import types

HERE = os.path.dirname(__file__)
_IMPORT = re.compile(r"^(\s*(?:import|from)\s+)dispatchtorch\b", re.M)


def load(name, lib):
    """The example module `name` bound to lib ('dispatchtorch' or 'torch')."""
    path = os.path.join(HERE, name + ".py")
    with open(path) as f:
        source = f.read()
    if lib == "torch":
        source = _IMPORT.sub(r"\1torch", source)
    module = types.ModuleType(f"examples_pytorch_{name}_{lib}")
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def numpy_state(model):
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


