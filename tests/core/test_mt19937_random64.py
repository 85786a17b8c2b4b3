"""random64() (ATen's (first << 32) | second) drawn by numpy's uint64 loop equals the
two-raw-draws formula, interleaved with 32-bit draws, so streams stay PyTorch's."""
import numpy as np

from dispatchtorch.ops import _mt19937 as M


def test_random64_equals_two_raw_draws_interleaved_with_random():
    fast, ref = M.MT19937(2024), M.MT19937(2024)
    for n in (1, 7, 1000, 0, 3):
        got = fast.random64(n)
        raw = ref._bg.random_raw(2 * n)
        np.testing.assert_array_equal(got, (raw[0::2] << np.uint64(32)) | raw[1::2])
        np.testing.assert_array_equal(fast.random(5), ref.random(5))
    assert M._NEXT64_IS_RANDOM64 == M._next64_is_random64()


def test_random64_after_reseed_and_state_reload():
    eng = M.MT19937(7)
    first = eng.random64(4)
    state = eng.state_bytes()
    after = eng.random64(4)
    eng.reseed(7)
    np.testing.assert_array_equal(eng.random64(4), first)
    eng.load_state_bytes(state)
    np.testing.assert_array_equal(eng.random64(4), after)


def test_bernoulli_scalar_integer_test_equals_the_double_uniform_test():
    from dispatchtorch.ops import _random_streams as S
    for p in (0.0, 2.0 ** -53, 3 * 2.0 ** -54, 0.1, 0.5, 0.9, 1 - 2.0 ** -53, 1.0):
        a, b = M.MT19937(11), M.MT19937(11)
        np.testing.assert_array_equal(S.bernoulli_scalar(a, 50_000, p),
                                      S._unit(b, 50_000, "float64") < p)
