"""The CPU reference divides bfloat16 as floats (numpy reports bfloat16's kind as 'V')."""
import numpy as np

import dispatchtorch as torch


def test_bfloat16_div_is_true_division():
    a = torch.tensor([-3.0, 2.5, 1.0], dtype=torch.bfloat16)
    b = torch.tensor([0.1171875, 0.5, 0.0], dtype=torch.bfloat16)
    got = (a / b).float().numpy()
    want = (a.float().numpy() / b.float().numpy()).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-2)


def test_bfloat16_fmod_by_zero_is_nan():
    a = torch.tensor([5.5, -3.0], dtype=torch.bfloat16)
    b = torch.tensor([0.0, 2.0], dtype=torch.bfloat16)
    got = torch.fmod(a, b).float().numpy()
    assert np.isnan(got[0]) and got[1] == -1.0
