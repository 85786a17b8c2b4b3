"""Running out of memory while allocating an op's output names the op and leaves
every existing tensor as it was (on any backend; simulated here on the CPU)."""
import pytest

import dispatchtorch as torch
from dispatchtorch._place import place_of
from dispatchtorch.backend import BackendError
from dispatchtorch.dispatch import OPS

REFUSED = (7, 7)


@pytest.fixture
def refuse_7x7(monkeypatch):
    place = place_of("cpu")
    real = place.empty

    def empty(shape, dtype, device):
        if tuple(shape) == REFUSED:
            raise MemoryError("simulated: device out of memory")
        return real(shape, dtype, device)
    monkeypatch.setattr(place, "empty", empty)       # what every op allocates through
    # except the CPU's allocating elementwise kernels (Backend.fresh_kernels), whose
    # ufunc allocates: off here (their own allocation failure: test_fresh_kernels.py)
    monkeypatch.setattr(place.bk, "fresh_kernels", {})    # ops resolved from now on
    saved = {name: dict(op.fresh) for name, op in OPS.items() if op.fresh}
    for name in saved:
        OPS[name].fresh.clear()
    yield
    for name, fresh in saved.items():
        OPS[name].fresh.update(fresh)
    monkeypatch.undo()
    for op in OPS.values():      # ops first resolved in the test: again, with their forms
        op.kernels.clear()


@pytest.mark.parametrize("op,name", [
    (lambda a, b, sq: a + b, "add"),                                 # binary
    (lambda a, b, sq: torch.exp(sq), "exp"),                         # unary
    (lambda a, b, sq: torch.where(sq > 0, sq, 1.0), "gt"),           # the mask comes first
    (lambda a, b, sq: torch.matmul(a, b), "matmul"),                 # the generic path
    (lambda a, b, sq: sq.reshape(7, 7, 1).sum(2), "sum"),            # the reduction path
])
def test_out_of_memory_names_the_op(refuse_7x7, op, name):
    a, b, flat = torch.ones(7, 1), torch.full((1, 7), 2.0), torch.arange(49.0)
    with pytest.raises(BackendError, match=rf"^{name} failed on backend 'cpu'.*out of memory"):
        op(a, b, flat.reshape(7, 7))                 # a view: no (7, 7) allocation
    assert a.tolist() == [[1.0]] * 7 and b.tolist() == [[2.0] * 7]
    assert flat.tolist() == [float(i) for i in range(49)]
