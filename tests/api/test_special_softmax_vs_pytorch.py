"""torch.special.softmax / log_softmax against PyTorch 2.13: values, the dtype argument
and the missing-dim error."""
import numpy as np
import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_as_pytorch(name):
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ours, theirs = getattr(dt.special, name), getattr(torch.special, name)
    for args, kwargs in (((1,), {}), ((0,), {"dtype": dt.float64}), ((), {"dim": -1})):
        tkwargs = {k: (torch.float64 if v is dt.float64 else v) for k, v in kwargs.items()}
        a, b = ours(dt.tensor(x), *args, **kwargs), theirs(torch.tensor(x), *args, **tkwargs)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError) as got:
        ours(dt.tensor(x))
    with pytest.raises(TypeError) as want:
        theirs(torch.tensor(x))
    assert str(got.value) == str(want.value)
