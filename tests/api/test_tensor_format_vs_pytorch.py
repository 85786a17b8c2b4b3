"""format(tensor, spec) / f-strings against PyTorch 2.13: a 0-dim tensor formats as its
Python number with or without a spec; others as str, and a spec is a TypeError."""
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("make", [lambda m: m.tensor(1.5), lambda m: m.tensor(3),
                                  lambda m: m.tensor(True), lambda m: m.tensor([1.5, 2.0]),
                                  lambda m: m.tensor(2.0, requires_grad=True),
                                  lambda m: m.empty((), device="meta")])
@pytest.mark.parametrize("spec", ["", ".3f", ">8"])
def test_format_as_pytorch(make, spec):
    def run(m):
        try:
            return format(make(m), spec)
        except TypeError as e:
            return TypeError, str(e)
    ours, theirs = run(dt), run(torch)
    if isinstance(theirs, str):
        theirs = theirs.replace("torch.", "dispatchtorch.")
    assert ours == theirs
