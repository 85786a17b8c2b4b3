"""Tensors whose repr must equal PyTorch's, character for character.

Each case is `name -> (fn(T), print options)`, T being `torch` or `dispatchtorch`.
`python -m tests.core.printing_cases` (with torch) rewrites the recorded answers that
the tests use where torch is absent. PyTorch writes `dtype=torch.float64`; the one
difference is that we name our own module there.
"""
from __future__ import annotations

import json
import pathlib

RECORDED = pathlib.Path(__file__).with_name("data") / "printing.json"


def _ar(T, n, **kw):
    return T.arange(n, **kw)


def _cases():
    c = {}
    floats = [[8., 9., 10., 11.], [1.5, -2.25], [0.1, 0.25, -3.0], [1e-5, 1.0], [1e9, 1.0],
              [123456.0, 0.5], [float("nan"), 1.0], [float("inf"), -float("inf"), 2.0],
              [0.0, -0.0], [float("nan")], [0.0, 0.0], [1e-8, 1e-9], [-1.0, 1.0, 1000.0],
              [3.14159265, 2.71828, 1.41421], [1e20, -1e-20], [12345678.0, 1.0],
              [0.0, float("nan"), 5.0], [1e4, 1.0], [1e3, 1.0], [-0.5, 0.000123]]
    for i, vals in enumerate(floats):
        c[f"float_{i}"] = (lambda T, v=vals: T.tensor(v), {})
        c[f"double_{i}"] = (lambda T, v=vals: T.tensor(v, dtype=T.float64), {})
    for i, vals in enumerate(floats[:8]):
        c[f"half_{i}"] = (lambda T, v=vals: T.tensor(v, dtype=T.float16), {})
        c[f"bf16_{i}"] = (lambda T, v=vals: T.tensor(v, dtype=T.bfloat16), {})
    c["bool"] = (lambda T: T.tensor([False, True]), {})
    c["bool_2d"] = (lambda T: T.tensor([[True, False, True], [False, False, True]]), {})
    c["int64"] = (lambda T: T.tensor([1, -20, 300]), {})
    c["int32"] = (lambda T: T.tensor([1, -20, 300], dtype=T.int32), {})
    c["uint8"] = (lambda T: T.tensor([0, 7, 255], dtype=T.uint8), {})
    c["int8"] = (lambda T: T.tensor([-128, 5], dtype=T.int8), {})
    c["int16"] = (lambda T: T.tensor([[1, 2], [300, -4]], dtype=T.int16), {})
    c["scalar_float"] = (lambda T: T.tensor(3.5), {})
    c["scalar_int"] = (lambda T: T.tensor(-7), {})
    c["scalar_double"] = (lambda T: T.tensor(1e-9, dtype=T.float64), {})
    c["scalar_bool"] = (lambda T: T.tensor(True), {})
    c["scalar_nan"] = (lambda T: T.tensor(float("nan")), {})
    c["empty"] = (lambda T: T.tensor([]), {})
    c["empty_int"] = (lambda T: T.zeros(0, dtype=T.int64), {})
    c["empty_2d"] = (lambda T: T.zeros(2, 0), {})
    c["empty_3d_double"] = (lambda T: T.zeros(0, 3, 1, dtype=T.float64), {})
    c["arange_2000"] = (lambda T: _ar(T, 2000.).reshape(2, 1000), {})
    c["arange_1001"] = (lambda T: _ar(T, 1001), {})
    c["arange_1000"] = (lambda T: _ar(T, 1000), {})
    c["arange_float_1001"] = (lambda T: _ar(T, 1001.) / 7, {})
    c["big_3d"] = (lambda T: _ar(T, 3000.).reshape(10, 15, 20), {})
    c["big_4d_int"] = (lambda T: _ar(T, 2 * 3 * 20 * 30).reshape(2, 3, 20, 30), {})
    c["matrix"] = (lambda T: _ar(T, 12.).reshape(3, 4) / 3, {})
    c["matrix_int"] = (lambda T: _ar(T, 12).reshape(3, 4) - 5, {})
    c["cube"] = (lambda T: _ar(T, 24.).reshape(2, 3, 4), {})
    c["hyper"] = (lambda T: _ar(T, 48).reshape(2, 2, 3, 4), {})
    c["wide_row"] = (lambda T: _ar(T, 40.) * 1.5, {})
    c["wide_row_int"] = (lambda T: _ar(T, 60) * 1000, {})
    c["wide_matrix"] = (lambda T: _ar(T, 60.).reshape(2, 30) / 3, {})
    c["sci_matrix"] = (lambda T: (_ar(T, 20.).reshape(4, 5) + 1) ** 8, {})
    c["column"] = (lambda T: _ar(T, 5.).reshape(5, 1), {})
    c["row_1x1"] = (lambda T: T.ones(1, 1), {})
    c["ones_3d_1"] = (lambda T: T.ones(1, 1, 1), {})
    c["neg_matrix"] = (lambda T: -_ar(T, 6.).reshape(2, 3) / 4, {})
    c["requires_grad"] = (lambda T: T.ones(2, requires_grad=True), {})
    c["grad_fn_mul"] = (lambda T: T.ones(2, requires_grad=True) * 2, {})
    c["grad_fn_add"] = (lambda T: T.ones(2, requires_grad=True) + 1, {})
    c["grad_fn_sum"] = (lambda T: T.ones(3, requires_grad=True).sum(), {})
    c["double_requires_grad"] = (lambda T: T.ones(3, dtype=T.float64, requires_grad=True), {})
    c["long_line_suffix"] = (lambda T: _ar(T, 12., dtype=T.float64) / 3, {})
    c["long_line_grad"] = (lambda T: (_ar(T, 11.) / 3).requires_grad_(), {})
    c["meta"] = (lambda T: T.empty(2, 3, device="meta"), {})
    c["meta_int"] = (lambda T: T.empty(4, dtype=T.int64, device="meta"), {})
    c["precision_2"] = (lambda T: T.tensor([1.23456, 2.5]), {"precision": 2})
    c["precision_8"] = (lambda T: T.tensor([1.23456789, 2.5], dtype=T.float64), {"precision": 8})
    c["precision_0"] = (lambda T: T.tensor([1.6, 2.5]), {"precision": 0})
    c["threshold_5"] = (lambda T: _ar(T, 10), {"threshold": 5})
    c["threshold_5_2d"] = (lambda T: _ar(T, 100.).reshape(10, 10), {"threshold": 5})
    c["edgeitems_1"] = (lambda T: _ar(T, 100.).reshape(10, 10), {"threshold": 5, "edgeitems": 1})
    c["edgeitems_0"] = (lambda T: _ar(T, 10.), {"threshold": 5, "edgeitems": 0})
    c["edgeitems_0_2d"] = (lambda T: _ar(T, 100.).reshape(10, 10), {"threshold": 5, "edgeitems": 0})
    c["linewidth_20"] = (lambda T: _ar(T, 20.), {"linewidth": 20})
    c["linewidth_200"] = (lambda T: _ar(T, 50.).reshape(2, 25), {"linewidth": 200})
    c["sci_on"] = (lambda T: T.tensor([1.5, 2.0]), {"sci_mode": True})
    c["sci_off"] = (lambda T: T.tensor([1e-8, 1e9]), {"sci_mode": False})
    c["sci_on_int"] = (lambda T: T.tensor([1., 200.]), {"sci_mode": True})
    c["profile_short"] = (lambda T: _ar(T, 2000.) / 3, {"profile": "short"})
    c["profile_full"] = (lambda T: _ar(T, 1200), {"profile": "full"})
    c["randn"] = (lambda T: (T.manual_seed(0), T.randn(4, 5))[1], {})
    c["randn_double"] = (lambda T: (T.manual_seed(1), T.randn(3, 3, dtype=T.float64))[1], {})
    c["rand_big"] = (lambda T: (T.manual_seed(2), T.rand(40, 40))[1], {})
    c["transposed"] = (lambda T: _ar(T, 6.).reshape(2, 3).t(), {})
    c["sliced"] = (lambda T: _ar(T, 20.)[::3], {})
    c["expanded"] = (lambda T: T.tensor([1., 2.]).expand(3, 2), {})
    c["half_big"] = (lambda T: T.tensor([65504., 0.001], dtype=T.float16), {})
    c["bf16_matrix"] = (lambda T: (_ar(T, 6.).reshape(2, 3) / 7).to(T.bfloat16), {})
    c["mixed_sign_zero"] = (lambda T: T.tensor([-0.0, 1.5]), {})
    c["all_int_big"] = (lambda T: T.tensor([1e8, 1.0]), {})
    c["all_int_huge"] = (lambda T: T.tensor([1e9, 1.0]), {})
    return c


CASES = _cases()


def render(T, name):
    fn, opts = CASES[name]
    T.set_printoptions(profile="default")
    T.set_printoptions(**opts)
    try:
        return repr(fn(T))
    finally:
        T.set_printoptions(profile="default")


def record():
    import torch
    data = {name: render(torch, name).replace("torch.", "dispatchtorch.") for name in CASES}
    RECORDED.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    record()
