"""torch.testing.make_tensor against PyTorch's: value ranges per dtype, clamping, layout
options and errors (class and message)."""
from __future__ import annotations

import pytest

import dispatchtorch as dt

torch = pytest.importorskip("torch")

RANGES = [("bool", 0, 1), ("uint8", 0, 9), ("int8", -9, 9), ("int32", -9, 9), ("int64", -9, 9),
          ("float16", -9, 9), ("bfloat16", -9, 9), ("float32", -9, 9), ("float64", -9, 9)]


@pytest.mark.parametrize("name,low,high", RANGES, ids=[r[0] for r in RANGES])
def test_default_ranges(name, low, high):
    dtype = getattr(dt, name)
    x = dt.testing.make_tensor(4000, dtype=dtype, device="cpu")
    assert x.dtype is dtype and tuple(x.shape) == (4000,)
    v = x.double() if name != "bool" else x.long()
    assert low <= v.min().item() and v.max().item() <= high
    if dtype.is_floating_point:
        # [-9, 9) drawn, then rounded to the dtype (bfloat16 may round up to 9, as in PyTorch)
        assert v.max().item() <= 9 and v.min().item() < -8 and v.max().item() > 8
    else:     # every integer of the range is drawn
        assert v.min().item() == low and v.max().item() == high


def test_complex_parts_and_given_range():
    z = dt.testing.make_tensor(2000, dtype=dt.complex64, device="cpu")
    r = dt.view_as_real(z)
    assert r.min().item() >= -9 and r.max().item() < 9 and r[:, 1].abs().max().item() > 8
    x = dt.testing.make_tensor(1000, dtype=dt.float32, device="cpu", low=2, high=3)
    assert 2 <= x.min().item() and x.max().item() < 3
    i = dt.testing.make_tensor(1000, dtype=dt.int8, device="cpu", low=-1000, high=1000)
    assert i.min().item() == -128 and i.max().item() == 127     # clamped to the dtype


def test_shape_forms_and_options():
    mt = dt.testing.make_tensor
    assert tuple(mt((2, 3), dtype=dt.float32, device="cpu").shape) == (2, 3)
    assert tuple(mt([2, 3], dtype=dt.float32, device="cpu").shape) == (2, 3)
    assert tuple(mt(dtype=dt.float32, device="cpu").shape) == ()
    nc = mt(3, 4, dtype=dt.float32, device="cpu", noncontiguous=True)
    assert tuple(nc.shape) == (3, 4) and not nc.is_contiguous()
    assert mt(1, dtype=dt.float32, device="cpu", noncontiguous=True).is_contiguous()
    assert mt(3, dtype=dt.float32, device="cpu", requires_grad=True).requires_grad
    z = mt(3000, dtype=dt.int64, device="cpu", low=0, high=2, exclude_zero=True)
    assert z.min().item() == 1
    f = mt(100, dtype=dt.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert (f != 0).all().item()
    cl = mt(2, 3, 4, 5, dtype=dt.float32, device="cpu", memory_format=dt.channels_last)
    assert tuple(cl.shape) == (2, 3, 4, 5)     # row-major here (docs/dropin.md, memory_format)


ERRORS = [
    ({"dtype": "int64", "requires_grad": True}),
    ({"dtype": "float32", "low": 5, "high": 1}),
    ({"dtype": "float32", "low": float("nan")}),
    ({"dtype": "uint8", "low": -10, "high": -5}),
    ({"dtype": "float32", "noncontiguous": True, "memory_format": "channels_last"}),
]


@pytest.mark.parametrize("kwargs", ERRORS)
def test_errors_match(kwargs):
    msgs = []
    for lib in (dt, torch):
        kw = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
        if "memory_format" in kw:
            kw["memory_format"] = lib.channels_last
        with pytest.raises(ValueError) as info:
            lib.testing.make_tensor(2, 3, 4, 5, device="cpu", **kw)
        msgs.append(str(info.value).replace("dispatchtorch.", "torch."))
    assert msgs[0] == msgs[1]


def test_low_equal_high_warns_for_floats():
    for lib in (dt, torch):
        with pytest.warns(FutureWarning, match="low==high"):
            lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=1, high=1)


def test_complex_isclose_agrees():
    # found through assert_close: isclose had dropped the imaginary part
    for equal_nan in (False, True):
        a = [1 + 1j, 2 + 0j, complex(float("nan"), 0)]
        b = [1 + 1j, 2 + 0.5j, complex(0, float("nan"))]
        ours = dt.isclose(dt.tensor(a), dt.tensor(b), equal_nan=equal_nan).tolist()
        assert ours == torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=equal_nan).tolist()
