"""torch.func.linearize: func's value at primals and a function of tangents giving the
Jacobian-vector product there. PyTorch traces func's forward-mode graph once and replays
it; here each jvp_fn call differentiates func at the primals again (func runs once per
call, on the primals as they are then: PyTorch's graph also reads them when it runs)."""
from __future__ import annotations

from ..utils._pytree import tree_flatten
from ._transforms import jvp


def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) is J(primals) @ tangents."""
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)
    meta = [(p.shape, p.device, p.dtype) for p in flat_primals]

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec "
                               f"as the primals {primals_spec}")
        for i, (t, (shape, device, dtype)) in enumerate(zip(flat_tangents, meta)):
            for what, got, want in (("shape", t.shape, shape), ("device", t.device, device),
                                    ("dtype", t.dtype, dtype)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree "
                                       f"doesn't match the {what} {want} of the corresponding "
                                       f"primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn
