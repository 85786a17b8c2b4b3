import numpy as np

import dispatchtorch as torch


def test_readme_example_matches_numpy():
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    y = (x @ x.T).relu().sum(dim=1, keepdim=True)
    xn = x.numpy().astype(np.float64)
    expected = np.maximum(xn @ xn.T, 0).sum(axis=1, keepdims=True)
    assert y.shape == (3, 1) and y.dtype is torch.float32 and str(y.device) == "cpu"
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)
