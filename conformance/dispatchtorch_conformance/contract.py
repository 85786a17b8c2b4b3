"""Checks of the backend contract itself, below the ops: device enumeration, host
transfers of every dtype, zero-size allocations, strided views that alias their
storage, copies with casts, `to()` between the backend and the CPU, views of a
tensor's bytes as another dtype (the optional `reinterpret`), what happens when a
kernel raises, and ops issued from several threads at once (contract_threads.py)."""
from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

import dispatchtorch as torch
from dispatchtorch.backend import ALL_DTYPE_NAMES, BARE, DTYPE_NAMES, compatible
from dispatchtorch.dispatch import OPS

from . import contract_threads
from . import dtypes as DT
from .case import seed_of
from .checks import describe_exc
from .compare import compare
from .results import Result


class ContractFailure(AssertionError):
    """A broken promise of the backend contract (the message says which)."""


def _expect(cond, message):
    if not cond:
        raise ContractFailure(message)


def _values(name, shape=(3, 5, 7)):
    """Random values of an odd shape with the dtype's extremes at the front."""
    rng = np.random.default_rng(seed_of(f"contract/{name}"))
    v = DT.random(rng, shape, name).reshape(-1)
    s = DT.special(name)
    v[:len(s)] = s
    return v.reshape(shape)


def _same_bits(actual, expected, what):
    _expect(actual.dtype == expected.dtype,
            f"{what}: host array of dtype {actual.dtype}, expected {expected.dtype}")
    _expect(actual.shape == expected.shape,
            f"{what}: host array of shape {actual.shape}, expected {expected.shape}")
    m = compare(actual, expected, 0.0, 0.0)
    _expect(m is None, f"{what}: {m.describe(0, 0) if m else ''}")
    if actual.dtype.kind == "f" or DT.name_of(actual.dtype) == "bfloat16":
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        zero = e == 0
        _expect(np.array_equal(np.signbit(a[zero]), np.signbit(e[zero])),
                f"{what}: the sign of zero is lost (-0.0 came back as 0.0)")


# -- the checks --------------------------------------------------------------------------------
# each takes the Target and returns None (pass) or a skip reason; it raises on failure

def devices(target):
    rt = target.rt
    _expect(rt.status == "ready", f"status {rt.status}: {rt.error}")
    _expect(compatible(rt.backend.api_version),
            f"api_version {rt.backend.api_version} is not compatible with this dispatchtorch")
    devs = list(rt.backend.devices())
    _expect(devs, "devices() returned no devices")
    _expect([d.index for d in devs] == list(range(len(devs))),
            f"device indices are {[d.index for d in devs]}, expected 0..{len(devs) - 1}")
    for d in devs:
        _expect(isinstance(d.name, str) and d.name.strip(), f"device {d.index} has no name")
        _expect(d.dtypes and set(d.dtypes) <= set(ALL_DTYPE_NAMES),
                f"device {d.index} claims dtypes {sorted(d.dtypes)}; expected a non-empty "
                f"subset of {list(ALL_DTYPE_NAMES)}")
        _expect(isinstance(d.properties, Mapping), f"device {d.index}: properties is not a mapping")
        dev = "cpu" if target.name == "cpu" else f"{target.name}:{d.index}"
        t = torch.empty(2, dtype=getattr(torch, sorted(d.dtypes)[0]), device=dev)
        _expect(str(t.device) == dev, f"a tensor made on {dev} reports device {t.device}")
    if target.name != "cpu":
        bad = f"{target.name}:{len(devs)}"
        try:
            torch.empty(1, device=bad)
        except RuntimeError as exc:
            _expect(target.name in str(exc), f"the error for device {bad} does not name the "
                                              f"backend: {exc}")
        else:
            raise ContractFailure(f"allocating on {bad}, a device that does not exist, did not raise")


def roundtrip(target, dtype):
    """from_host then to_host gives back every bit (-0.0, NaN, extremes included), in
    the handle's shape (0-d and size-1 tensors too)."""
    bk, idx = target.rt.backend, target.index
    host = _values(dtype)
    for x in (host, host.reshape(-1)[:1].reshape(()), host.reshape(-1)[:1]):
        h = bk.from_host(np.ascontiguousarray(x).reshape(x.shape), idx)
        _same_bits(np.asarray(bk.to_host(h)), x,
                   f"backend.to_host(backend.from_host(x)) of shape {list(x.shape)}")
    _expect(bk.device_index(h) == idx, f"device_index of a handle made on device {idx} is "
                                        f"{bk.device_index(h)}")
    t = torch.tensor(host, device=target.device)
    _same_bits(np.array(t.cpu().numpy()), host, "tensor(x, device).cpu()")
    bk.synchronize(idx)


def zero_size(target, dtype):
    bk, idx = target.rt.backend, target.index
    for shape in ((0,), (3, 0, 2)):
        h = bk.empty(shape, dtype, idx)
        a = np.asarray(bk.to_host(h))
        _expect(a.shape == shape, f"empty({shape}) came back with shape {a.shape}")
        h2 = bk.from_host(np.zeros(shape, DT.NP[dtype]), idx)
        _expect(np.asarray(bk.to_host(h2)).shape == shape, f"from_host of a {shape} array failed")
    t = torch.empty((0, 4), dtype=getattr(torch, dtype), device=target.device)
    _expect(tuple(t.cpu().shape) == (0, 4), "torch.empty((0, 4)) on the device lost its shape")
    v = t[:, 1]
    _expect(tuple(v.cpu().shape) == (0,), "a view of an empty tensor lost its shape")


def views(target, dtype="float32"):
    """as_strided aliases its storage, with strides and offsets counted from the
    storage's start; fill_ and copy_ write through views; copy_ casts like C."""
    bk, idx = target.rt.backend, target.index
    base = np.arange(24, dtype=np.float32)
    s = bk.from_host(base, idx)
    v = bk.as_strided(s, (3, 4), (8, 2), 1)
    want = np.array([[base[1 + 8 * i + 2 * j] for j in range(4)] for i in range(3)], np.float32)
    _same_bits(np.asarray(bk.to_host(v)), want, "as_strided((3, 4), (8, 2), 1)")
    bk.fill_(v, -1.0)
    expect = base.copy()
    for i in range(3):
        for j in range(4):
            expect[1 + 8 * i + 2 * j] = -1.0
    _same_bits(np.asarray(bk.to_host(s)), expect, "the storage after fill_ through a view")
    w = bk.as_strided(s, (2, 2), (1, 3), 5)           # counted from the storage, not from v
    bk.copy_(w, bk.from_host(np.array([[10, 11], [12, 13]], np.float32), idx))
    expect[[5, 8, 6, 9]] = [10, 11, 12, 13]
    _same_bits(np.asarray(bk.to_host(s)), expect, "the storage after copy_ into a view")
    src = bk.from_host(np.array([-1.7, 2.5, -0.0, 0.5], np.float32), idx)
    for name, want_vals in (("int32", [-1, 2, 0, 0]), ("bool", [True, True, False, True])):
        if name in target.dtypes:
            dst = bk.empty((4,), name, idx)
            bk.copy_(dst, src)
            _same_bits(np.asarray(bk.to_host(dst)), np.array(want_vals, DT.NP[name]),
                       f"copy_ float32 -> {name} (C casts: truncate, != 0)")
    t = torch.tensor(base, device=target.device).reshape(4, 6)
    t[1:, ::2].fill_(7.0)
    expect = base.reshape(4, 6).copy()
    expect[1:, ::2] = 7.0
    _same_bits(np.array(t.cpu().numpy()), expect, "a tensor after fill_ through t[1:, ::2]")


def transfers(target, dtype):
    """to() from the CPU and back, of contiguous tensors and of views."""
    host = _values(dtype, (6, 5))
    cpu = torch.tensor(host)
    d = cpu.to(target.device)
    _expect(str(d.device) == target.device, f"to({target.device}) gave a tensor on {d.device}")
    _expect(d.dtype is cpu.dtype, f"to({target.device}) changed the dtype to {d.dtype}")
    _same_bits(np.array(d.to("cpu").numpy()), host, f"to({target.device}).to('cpu')")
    view = d.T[1:, ::2]
    _same_bits(np.array(view.cpu().numpy()), np.ascontiguousarray(host.T[1:, ::2]),
               "a transposed, stepped view copied to the CPU")


def kernel_error(target):
    """A kernel that raises reaches the user as an error naming op and backend; the
    backend keeps working afterwards."""
    op = OPS["add"]
    a = torch.tensor([1.0, 2.0], device=target.device)
    b = torch.tensor([10.0, 20.0], device=target.device)
    op.kernels.pop(target.name, None)
    torch.add(a, b)                                   # resolve the real kernel first
    real = op.kernels.get(target.name)

    def explode(*args, **kwargs):
        raise RuntimeError("injected failure")
    op.kernels[target.name] = explode
    try:
        try:
            torch.add(a, b)
        except RuntimeError as exc:
            text = str(exc)
            _expect("add" in text and target.name in text and "injected failure" in text,
                    f"the error does not name op 'add', backend '{target.name}' and the cause: "
                    f"{text}")
        else:
            raise ContractFailure("a kernel raised but the op returned normally")
    finally:
        if real is None:
            op.kernels.pop(target.name, None)
        else:
            op.kernels[target.name] = real
    # the backend keeps working: the op runs again (its values are the cases' business)
    # and memory allocated before the error is intact
    r = torch.add(a, b)
    _expect(tuple(r.shape) == (2,) and str(r.device) == target.device,
            "after a kernel raised, add no longer returns a tensor of shape (2,) on the device")
    _expect(a.cpu().numpy().tolist() == [1.0, 2.0] and b.cpu().numpy().tolist() == [10.0, 20.0],
            "after a kernel raised, tensors allocated before it changed")


def _same_bytes(actual, expected, what):
    _expect(actual.dtype == expected.dtype and actual.shape == expected.shape,
            f"{what}: {actual.dtype} {list(actual.shape)}, expected {expected.dtype} "
            f"{list(expected.shape)}")
    same = np.ascontiguousarray(actual).view(np.uint8) == np.ascontiguousarray(expected).view(np.uint8)
    _expect(bool(same.all()), f"{what}: {int((~same).sum())} bytes changed")


def bare_roundtrip(target, dtype):
    """A bare dtype (uint16-64, float8) the device claims: from_host / to_host, tensor(x,
    device).cpu() and a strided view keep every byte (every float8 bit pattern)."""
    bk, idx = target.rt.backend, target.index
    host = DT.bare_values(dtype)
    _same_bytes(np.asarray(bk.to_host(bk.from_host(host, idx))), host,
                "backend.to_host(backend.from_host(x))")
    t = torch.tensor(host, device=target.device)
    _same_bytes(np.asarray(t.cpu()), host, "tensor(x, device).cpu()")
    _same_bytes(np.asarray(t.T[1:, ::2].cpu()), np.ascontiguousarray(host.T[1:, ::2]),
                "a transposed, stepped view copied to the CPU")
    e = torch.empty((3, 0), dtype=getattr(torch, dtype), device=target.device)
    _expect(tuple(e.cpu().shape) == (3, 0), "torch.empty((3, 0)) on the device lost its shape")
    bk.synchronize(idx)


def reinterpret(target, dtype):
    """Tensor.view(dtype) through the optional `reinterpret` hook: a tensor's bytes read
    as uint8 (whole and sliced) are the CPU's, a write through the uint8 view changes
    the tensor as on the CPU, and the view read back as dtype is the tensor."""
    bk, idx = target.rt.backend, target.index
    if "uint8" not in target.dtypes:
        return "the device does not claim uint8"
    if bk.reinterpret(bk.from_host(np.zeros(4, np.uint8), idx), dtype) is None:
        return ("the backend has no reinterpret (optional: view(dtype), view_as_real, "
                "storage bytes raise a RuntimeError naming it)")
    host = _values(dtype, (4, 6))
    ours, ref = torch.tensor(host, device=target.device), torch.tensor(host)
    u8 = torch.uint8
    _same_bytes(np.asarray(ours.view(u8).cpu()), np.asarray(ref.view(u8)), "x.view(uint8)")
    _same_bytes(np.asarray(ours[1:, 2:].view(u8).cpu()), np.asarray(ref[1:, 2:].view(u8)),
                "x[1:, 2:].view(uint8)")
    for t in (ours, ref):
        t.view(u8)[:, ::3] = 1                # one byte of some elements, through the alias
    _same_bytes(np.asarray(ours.cpu()), np.asarray(ref), "x after a write through x.view(uint8)")
    back = ours.view(u8).view(getattr(torch, dtype))
    _same_bytes(np.asarray(back.cpu()), np.asarray(ours.cpu()), "x.view(uint8).view(x.dtype)")
    bk.synchronize(idx)


def _fail(message):
    raise ContractFailure(message)


def threads(target):
    """Ops from several threads at once equal the same ops run one at a time."""
    return contract_threads.check(target, _expect, _fail)


PER_BACKEND = {"devices": devices, "kernel-error": kernel_error, "views": views,
               "threads": threads}
PER_DTYPE = {"roundtrip": roundtrip, "zero-size": zero_size, "to": transfers,
             "reinterpret": reinterpret}
PER_BARE_DTYPE = {"bare-roundtrip": bare_roundtrip}


def names(target_dtypes=DTYPE_NAMES):
    """Every contract check id: 'devices', 'roundtrip/float16', ..."""
    out = list(PER_BACKEND)
    for name in PER_DTYPE:
        out += [f"{name}/{d}" for d in DT.ALL if d in target_dtypes]
    for name in PER_BARE_DTYPE:
        out += [f"{name}/{d}" for d in BARE if d in target_dtypes]
    return out


def run_one(target, check_id):
    name, _, dtype = check_id.partition("/")
    t0 = time.perf_counter()
    try:
        if name in PER_BACKEND:
            if name == "views" and "float32" not in target.dtypes:
                outcome, message = "skip", "the device does not claim float32"
            else:
                skipped = PER_BACKEND[name](target)
                outcome, message = ("skip", skipped) if skipped else ("pass", "")
        else:
            skipped = (PER_BARE_DTYPE.get(name) or PER_DTYPE[name])(target, dtype)
            outcome, message = ("skip", skipped) if skipped else ("pass", "")
    except ContractFailure as exc:
        outcome, message = "fail", str(exc)
    except Exception as exc:        # noqa: BLE001
        outcome, message = "error", describe_exc(exc)
    return Result("contract/" + name, "-", dtype or "-", "-", "-", outcome, message,
                  seconds=round(time.perf_counter() - t0, 6))


def run(target, only=None):
    """Every contract check (or those whose id matches `only`, a predicate)."""
    return [run_one(target, c) for c in names(target.dtypes) if only is None or only(c)]
