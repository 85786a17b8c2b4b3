"""The nll_loss inputs both the forward and the backward row tests run: plain and
weighted, an ignored class, a (N, C, d) input and one unbatched sample."""
import numpy as np


def nll_cases(rng):
    x = rng.standard_normal((16, 5)).astype(np.float32)
    t = rng.integers(0, 5, 16)
    t[[2, 7]] = 3                       # the ignored class below
    w = rng.random(5).astype(np.float32)
    x3 = rng.standard_normal((4, 5, 3)).astype(np.float32)
    t3 = rng.integers(0, 5, (4, 3))
    return x, t, w, [(x, t, None, -100), (x, t, w, -100), (x, t, w, 3), (x, t, None, 3),
                     (x3, t3, w, 1), (x[0], np.array(2), w, -100)]
