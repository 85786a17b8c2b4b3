"""Run one program on dispatchtorch and on PyTorch and compare what came out: the
exception class (and that ours names the op), or the values, shape and dtype."""
import numpy as np

import dispatchtorch

try:
    import torch
except ImportError:
    torch = None


def outcome(T, program):
    """("raised", class name, message) or ("returned", value as numpy/python, dtype name)."""
    try:
        r = program(T)
    except Exception as exc:        # the class is what is compared
        return ("raised", type(exc).__name__, str(exc))
    if isinstance(r, (T.Tensor,)):
        return ("returned", np.asarray(r.detach().float().tolist() if r.dtype.is_floating_point
                                       else r.tolist()), str(r.dtype).split(".")[-1],
                tuple(r.shape))
    return ("returned", r, None, None)


def assert_same(program, op=None):
    """program(T) behaves the same on both; a raise from us names `op` when given."""
    ours = outcome(dispatchtorch, program)
    theirs = outcome(torch, program)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "raised":
        assert ours[1] == theirs[1], (ours, theirs)
        if op is not None:
            assert op in ours[2], (op, ours)
        return ours
    assert ours[2:] == theirs[2:], (ours, theirs)
    np.testing.assert_allclose(np.asarray(ours[1], dtype=float), np.asarray(theirs[1], dtype=float),
                               rtol=1e-6, atol=1e-7, equal_nan=True)
    return ours
