"""Type promotion against PyTorch's table, written out here (not derived from our code)."""
import itertools

import pytest

import dispatchtorch as torch

ABBREV = {"b": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16,
          "i32": torch.int32, "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16,
          "f32": torch.float32, "f64": torch.float64}

TABLE = """
       b    u8    i8   i16   i32   i64   f16  bf16   f32   f64
 b     b    u8    i8   i16   i32   i64   f16  bf16   f32   f64
 u8    u8    u8   i16   i16   i32   i64   f16  bf16   f32   f64
 i8    i8   i16    i8   i16   i32   i64   f16  bf16   f32   f64
 i16   i16   i16   i16   i16   i32   i64   f16  bf16   f32   f64
 i32   i32   i32   i32   i32   i32   i64   f16  bf16   f32   f64
 i64   i64   i64   i64   i64   i64   i64   f16  bf16   f32   f64
 f16   f16   f16   f16   f16   f16   f16   f16   f32   f32   f64
 bf16  bf16  bf16  bf16  bf16  bf16  bf16   f32  bf16   f32   f64
 f32   f32   f32   f32   f32   f32   f32   f32   f32   f32   f64
 f64   f64   f64   f64   f64   f64   f64   f64   f64   f64   f64
"""


def _pairs():
    lines = [line.split() for line in TABLE.strip().splitlines()]
    cols = lines[0]
    for row in lines[1:]:
        for col, result in zip(cols, row[1:]):
            yield row[0], col, result


PAIRS = list(_pairs())


def test_table_is_complete():
    assert len(PAIRS) == 100


@pytest.mark.parametrize("a,b,expected", PAIRS)
def test_promote_types(a, b, expected):
    assert torch.promote_types(ABBREV[a], ABBREV[b]) is ABBREV[expected]


@pytest.mark.parametrize("a,b,expected", PAIRS)
def test_binary_op_result_dtype(a, b, expected):
    x = torch.ones(2, dtype=ABBREV[a])
    y = torch.ones(2, dtype=ABBREV[b])
    out = torch.maximum(x, y)
    assert out.dtype is ABBREV[expected]
    assert (x == y).dtype is torch.bool


# (tensor dtype, other operand, expected) -- PyTorch's wrapped-number and 0-d rules
SCALAR_CASES = [
    ("i32", 2, "i32"), ("i32", 2.5, "f32"), ("i32", True, "i32"), ("b", 1, "i64"),
    ("b", 1.0, "f32"), ("b", True, "b"), ("u8", 300, "u8"), ("f16", 2.5, "f16"),
    ("bf16", 1, "bf16"), ("f64", 1.0, "f64"), ("i64", 1.5, "f32"),
]


@pytest.mark.parametrize("a,scalar,expected", SCALAR_CASES)
def test_python_scalars_are_weak(a, scalar, expected):
    x = torch.ones(3, dtype=ABBREV[a])
    assert (x + scalar).dtype is ABBREV[expected]
    assert (scalar + x).dtype is ABBREV[expected]


# dim>0 tensor with a 0-d tensor: the 0-d one only wins with a higher category
ZERO_DIM_CASES = [
    ("f16", "f64", "f16"), ("i32", "i64", "i32"), ("i32", "f64", "f64"), ("b", "i64", "i64"),
    ("u8", "i8", "u8"), ("f32", "f16", "f32"), ("i8", "f16", "f16"), ("b", "f32", "f32"),
]


@pytest.mark.parametrize("a,zero,expected", ZERO_DIM_CASES)
def test_zero_dim_tensors_are_weaker(a, zero, expected):
    x = torch.ones(3, dtype=ABBREV[a])
    z = torch.ones((), dtype=ABBREV[zero])
    assert (x + z).dtype is ABBREV[expected]
    assert torch.result_type(x, z) is ABBREV[expected]


def test_two_zero_dim_tensors_promote_normally():
    assert (torch.ones((), dtype=torch.int32) + torch.ones((), dtype=torch.int64)).dtype is torch.int64


def test_int_to_float_ops_use_the_default_dtype():
    x = torch.arange(4)
    assert (x / 2).dtype is torch.float32
    assert torch.exp(x).dtype is torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert (x / 2).dtype is torch.float64
        assert torch.sqrt(x).dtype is torch.float64
        assert (x + 0.5).dtype is torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_table_agrees_with_pytorch_when_installed():
    real = pytest.importorskip("torch")
    for a, b, expected in PAIRS:
        ra, rb = getattr(real, ABBREV[a].name), getattr(real, ABBREV[b].name)
        assert str(real.promote_types(ra, rb)).split(".")[1] == ABBREV[expected].name


@pytest.mark.parametrize("a,b", list(itertools.product(["i32", "f32"], repeat=2)))
def test_inplace_refuses_lossy_result(a, b):
    x = torch.ones(2, dtype=ABBREV[a])
    y = torch.ones(2, dtype=ABBREV[b])
    if a == "i32" and b == "f32":
        with pytest.raises(RuntimeError, match="can't be cast"):
            x.add_(y)
        assert x.tolist() == [1, 1]           # untouched
    else:
        x.add_(y)
        assert x.tolist() == [2, 2]
