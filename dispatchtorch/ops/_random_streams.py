"""The transforms ATen's CPU kernels apply to the mt19937 stream, one function each.

Each follows aten/src/ATen/core/{DistributionsHelper,TransformationHelper}.h and
native/cpu/DistributionTemplates.h draw for draw, so a seed gives PyTorch's CPU
numbers bit for bit (float32 and float64; float16/bfloat16 go through float32 math as
ATen does, whose libm calls numpy's may differ from in the last bit). Every function
takes the engine and returns a numpy array in the order of a contiguous tensor.
"""
from __future__ import annotations

import math

import numpy as np

from . import _cephes_f32 as cephes

# std::numeric_limits<T>::digits: the bound of random_() on floating dtypes
DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def _libm(fn, x):
    """fn (a `math` function: the C library's, as ATen calls it) over an array. numpy's own
    float64 log/log1p/exp/tan differ from it in the last bit for 0.3-8% of inputs."""
    x = np.asarray(x, np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def _unit(eng, n, dtype_name):
    """uniform_real_distribution(0, 1): n values in [0, 1): 53 bits of random64() for
    double, else 24 bits of random() in float32 (half types round that afterwards)."""
    if dtype_name == "float64":
        return (eng.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    return (eng.random(n) & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)


def fma64(a, b, c):
    """round(a * b + c) for doubles: Dekker's exact product, then Knuth's two-sum (ATen is
    compiled with FMA contraction, so `x * span + from` rounds once)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    split = 134217729.0                        # 2**27 + 1
    def halves(v):
        t = split * v
        hi = t - (t - v)
        return hi, v - hi
    p = a * b
    ah, al = halves(a)
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def uniform(eng, n, dtype_name, low=0.0, high=1.0, np_dtype=np.float32):
    x = _unit(eng, n, dtype_name)
    if dtype_name == "float64":
        return fma64(x, high - low, low)
    # from/to are first rounded to the tensor's dtype; the arithmetic is float32
    lo, hi = np.asarray([low, high], dtype=np_dtype).astype(np.float32)
    span = np.asarray(hi - lo, dtype=np_dtype).astype(np.float32)
    return cephes._fma(x, span, lo)


def normal(eng, n, dtype_name, mean=0.0, std=1.0, contiguous=True):
    """normal_kernel: the Box-Muller fill for contiguous 16+, else the cached scalar path."""
    if n >= 16 and contiguous:
        return _normal_fill(eng, n, dtype_name, mean, std)
    return normal_scalar(eng, n, mean, std)


def _normal_fill(eng, n, dtype_name, mean, std):
    wide = dtype_name == "float64"
    data = _unit(eng, n, dtype_name)
    whole = n - n % 16
    _box_muller_16(data[:whole].reshape(-1, 16), wide)
    if n % 16:                                  # ATen redraws and redoes the last 16
        tail = _unit(eng, 16, dtype_name)
        _box_muller_16(tail.reshape(1, 16), wide)
        data[n - 16:] = tail
    if mean != 0.0 or std != 1.0:
        if wide:
            data = fma64(data, std, mean)
        else:
            data = cephes._fma(data, np.float32(std), np.float32(mean))
    return data


def _box_muller_16(blocks, wide):
    """normal_fill_16 on each row of 16: pairs (j, j + 8) become (r cos t, r sin t)."""
    u1 = 1 - blocks[:, :8]
    u2 = blocks[:, 8:]
    if wide:
        radius = np.sqrt(-2 * _libm(math.log, u1))
        theta = 2.0 * math.pi * u2
        blocks[:, :8] = radius * _libm(math.cos, theta)
        blocks[:, 8:] = radius * _libm(math.sin, theta)
        return
    radius = np.sqrt(np.float32(-2) * cephes.log(u1))
    sin, cos = cephes.sincos(np.float32(2.0 * math.pi) * u2)
    blocks[:, :8] = radius * cos
    blocks[:, 8:] = radius * sin


def normal_scalar(eng, n, mean=0.0, std=1.0):
    """normal_distribution<double>, element by element: pairs, the spare kept on the engine."""
    out = np.empty(n, dtype=np.float64)
    start = 0
    if n and eng.next_double_normal is not None:
        out[0] = eng.next_double_normal
        eng.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = _unit(eng, 2 * pairs, "float64")
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * _libm(math.log1p, -u2))
        theta = 2.0 * math.pi * u1
        vals = np.empty(2 * pairs)
        vals[0::2] = r * _libm(math.cos, theta)
        vals[1::2] = r * _libm(math.sin, theta)
        out[start:] = vals[:n - start]
        if (n - start) % 2:
            eng.next_double_normal = float(vals[-1])
    return out * std + mean


def random_from_to(eng, n, low, span, wide_ok):
    """random_(from, to): from + draw % span, with 64-bit draws once span needs them."""
    draws = eng.random64(n) if wide_ok and span >= 1 << 32 else eng.random(n)
    return ((draws % np.uint64(span)) + np.uint64(low % 2 ** 64)).view(np.int64)


def random_full(eng, n, modulus, wide):
    """random_() without bounds: draw % (max + 1) (floats: 2**digits + 1)."""
    draws = eng.random64(n) if wide else eng.random(n)
    return draws % np.uint64(modulus)


def randperm(eng, n):
    """Fisher-Yates as randperm_cpu: swap i with i + random() % (n - i)."""
    perm = list(range(n))
    if n > 1:
        draws = eng.random(n - 1).tolist()
        for i, d in enumerate(draws):
            z = i + d % (n - i)
            perm[i], perm[z] = perm[z], perm[i]
    return np.asarray(perm, dtype=np.int64)


def bernoulli_tensor(eng, probs, double_p):
    """bernoulli_(p tensor): uniform in p's precision (double or float) < p."""
    u = _unit(eng, probs.size, "float64" if double_p else "float32")
    p = probs.ravel().astype(np.float64 if double_p else np.float32)
    return u < p


def bernoulli_scalar(eng, n, p):
    """bernoulli_(float p): a double uniform < p (ATen's non-MKL CPU path). The uniform
    is k * 2**-53 for the 53-bit integer k, so the test is k < p * 2**-53's ceiling in
    integers: the same draws without the float64 conversion and product (dropout)."""
    bound = math.ceil(p * 2.0 ** 53)          # exact: 0 <= p <= 1 (bernoulli_ checks)
    draws = eng.random64(n)
    np.bitwise_and(draws, np.uint64((1 << 53) - 1), out=draws)    # in place: no second
    return draws < np.uint64(bound)                                # 8-byte array


def exponential(eng, n, lambd):
    return -1.0 / lambd * _libm(math.log, 1.0 - _unit(eng, n, "float64"))


def geometric(eng, n, p):
    return np.ceil(_libm(math.log, _unit(eng, n, "float64")) / math.log(1.0 - p))


def log_normal(eng, n, mean, std):
    return _libm(math.exp, normal_scalar(eng, n, mean, std))


def cauchy(eng, n, median, sigma):
    return median + sigma * _libm(math.tan, math.pi * (_unit(eng, n, "float64") - 0.5))


def multinomial(eng, rows, num_samples, replacement, dtype_name):
    """ATen's two algorithms: exponential races (argmax / top-k of p / Exp(1)) without
    replacement or for one sample; else a binary search of each row's normalised CDF."""
    np_dtype = np.float64 if dtype_name == "float64" else np.float32
    p = rows.astype(np_dtype)
    if not replacement or num_samples == 1:
        q = exponential(eng, p.size, 1.0).astype(np_dtype).reshape(p.shape)
        with np.errstate(all="ignore"):
            race = p / q
        if num_samples == 1:
            return np.argmax(race, axis=1)[:, None]
        return np.argsort(-race, axis=1, kind="stable")[:, :num_samples]
    out = np.empty((p.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(p):
        cdf = np.cumsum(row, dtype=np_dtype)
        cdf = cdf / cdf[-1]
        cdf[-1] = 1
        out[i] = np.searchsorted(cdf.astype(np.float64), _unit(eng, num_samples, "float64"),
                                 side="left")
    return out
