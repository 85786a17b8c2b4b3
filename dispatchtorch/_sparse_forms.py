"""How a dense op's function form reaches a sparse layout without a check on the dense
path: a sparse tensor has none of a dense tensor's storage attributes, so the first read
of one raises SparseOperand; the function forms that sparse tensors support catch it
(a try block costs nothing until it raises) and call the implementation that
dispatchtorch.sparse registered here under the op's name. Any other op lets the
NotImplementedError (which names the op) through."""
from __future__ import annotations

# op name -> the sparse implementation, called with the function form's own arguments;
# filled by dispatchtorch.sparse (a layer above the ops, which cannot import it)
FORMS = {}


class SparseOperand(NotImplementedError):
    """A dense op was handed a sparse tensor (its message names the op)."""


def call(name, exc, args, kwargs):
    """The sparse implementation of op `name`, or the dense op's own error."""
    fn = FORMS.get(name)
    if fn is None:
        raise exc
    return fn(*args, **kwargs)
