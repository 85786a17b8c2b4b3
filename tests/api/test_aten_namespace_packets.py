"""torch.ops.aten here: packets of this package's own rows, compared by identity as
selective checkpointing policies compare them, named as PyTorch names them, calling the
row's function; ATen names of other rows resolve to those rows; others are absent."""
import numpy as np
import pytest

import dispatchtorch as dt
from dispatchtorch.dispatch import OPS

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["mm", "addmm", "bmm", "relu", "sin"])
def test_names_and_identity_as_pytorch(name):
    ours, theirs = getattr(dt.ops.aten, name), getattr(torch.ops.aten, name)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert str(ours.default) == str(theirs.default)
    assert ours.default.name() == theirs.default.name()
    assert ours.default.overloadpacket is ours
    assert getattr(dt.ops.aten, name).default is ours.default       # one object per row
    assert ours.default in {ours.default} and ours.default == ours.default
    assert ours.default != dt.ops.aten.exp.default


def test_calls_run_the_rows_function():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = dt.ops.aten.mm.default(dt.tensor(a), dt.tensor(a.T)).numpy()
    np.testing.assert_allclose(got, a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-6)
    np.testing.assert_array_equal(dt.ops.aten.relu(dt.tensor([-1.0, 2.0])).numpy(), [0.0, 2.0])


def test_aten_names_of_other_rows():
    assert dt.ops.aten.convolution.default is dt.ops.aten.conv2d.default
    flash = dt.ops.aten._scaled_dot_product_flash_attention.default
    assert flash is dt.ops.aten.scaled_dot_product_attention.default
    assert dt.ops.aten._scaled_dot_product_efficient_attention.default is flash


def test_every_row_has_a_packet_and_other_names_are_absent():
    for name in list(OPS)[:50]:
        assert str(getattr(dt.ops.aten, name).default) == f"aten.{name}.default"
    with pytest.raises(AttributeError, match="'aten' object has no attribute 'no_such_op'"):
        dt.ops.aten.no_such_op
    with pytest.raises(AttributeError):
        torch.ops.aten.no_such_op
