"""Which thread traces and where the user's call is: the state the tracer (tracer.py) and
the argument checks it records (checks.py) share, below both."""
from __future__ import annotations

import os
import sys
import threading

_TLS = threading.local()       # .tracer: the calling thread's Tracer
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ENGINE = os.path.join("autograd", "engine.py")


def current():
    """The calling thread's tracer, or None."""
    return getattr(_TLS, "tracer", None)


def user_frame():
    """(the public dispatchtorch function the user called, 'file:line in fn' of the
    user's line) for the innermost call from outside the package. Inside a backward
    pass: (the derivative rule's function, 'backward: file:line in rule')."""
    f = sys._getframe(1)
    op = ""
    prev = None
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG):
            return op, f"{fn}:{f.f_lineno} in {f.f_code.co_name}"
        if fn.endswith(_ENGINE) and prev is not None:
            return op, f"backward: {prev.f_code.co_filename}:{prev.f_lineno} in {op}"
        if "_capture" not in fn:
            op = f.f_code.co_name
            prev = f
        f = f.f_back
    return op, ""
