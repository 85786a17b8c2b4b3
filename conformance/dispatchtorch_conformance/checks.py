"""Verdicts: a backend's Run against the reference's Run of the same sample."""
from __future__ import annotations


from .compare import compare, same_value, tolerance
from .execute import HostTensor

# PyTorch's error types, most specific first: the backend must raise the same kind
_KINDS = (IndexError, KeyError, TypeError, NotImplementedError, ValueError, RuntimeError,
          ArithmeticError)


def error_kind(exc) -> str:
    for k in _KINDS:
        if isinstance(exc, k):
            return k.__name__
    return type(exc).__name__


def describe_exc(exc) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:400]


class Verdict:
    """The outcome of one check while it is being decided."""

    def __init__(self, outcome="pass", message=""):
        self.outcome, self.message = outcome, message
        self.max_abs = self.max_rel = self.rtol = self.atol = None
        self.max_ulp = self.ulp_budget = None
        self.stats = {}

    def note(self, ulps):
        """Keep the worst ulp distance and absolute error seen by passing comparisons."""
        if self.outcome == "pass" and self.stats:
            self.max_ulp = self.stats.get("max_ulp")
            if self.max_abs is None:
                self.max_abs = self.stats.get("max_abs")
            self.ulp_budget = ulps

    def fail(self, message, outcome="fail"):
        if self.outcome == "pass":
            self.outcome, self.message = outcome, message
        return self


def errors(ref, tgt, declared, stage="") -> Verdict | None:
    """Error behaviour. None when neither raised (values still to compare)."""
    v = Verdict()
    if ref.exc is None and declared is not None:
        return v.fail(f"the reference did not raise the declared {declared.__name__}: the "
                      f"case is out of date with the core")
    if ref.exc is None and tgt.exc is None:
        return None
    if ref.exc is not None and declared is not None and not isinstance(ref.exc, declared):
        return v.fail(f"the reference raised {describe_exc(ref.exc)}, not the declared "
                      f"{declared.__name__}")
    if ref.exc is None:
        return v.fail(f"{stage}raised {describe_exc(tgt.exc)} (during {tgt.where}); the "
                      f"reference does not raise", "error")
    if tgt.exc is None:
        return v.fail(f"{stage}did not raise; the reference raises {describe_exc(ref.exc)}")
    if error_kind(ref.exc) != error_kind(tgt.exc):
        return v.fail(f"{stage}raised {describe_exc(tgt.exc)}; the reference raises "
                      f"{error_kind(ref.exc)}: {describe_exc(ref.exc)}")
    v.message = f"both raise {error_kind(ref.exc)}"
    return v


def compare_items(v, ref_items, tgt_items, tols, expect_device=None, what="output", ulps=None):
    """Compare [(path, HostTensor | value)] lists into the verdict v."""
    if len(ref_items) != len(tgt_items):
        return v.fail(f"returned {len(tgt_items)} {what}s; the reference returns {len(ref_items)}")
    u = None
    for (path, r), (_, t) in zip(ref_items, tgt_items):
        if isinstance(r, HostTensor) != isinstance(t, HostTensor):
            return v.fail(f"{path}: got {type(t).__name__}, the reference gives {type(r).__name__}")
        if not isinstance(r, HostTensor):
            if not same_value(r, t):
                return v.fail(f"{path}: got {t!r}, the reference gives {r!r}")
            continue
        if t.dtype != r.dtype:
            return v.fail(f"{path}: dtype {t.dtype}, the reference gives {r.dtype}")
        if t.shape != r.shape:
            return v.fail(f"{path}: shape {list(t.shape)}, the reference gives {list(r.shape)}")
        if t.values.shape != r.values.shape:
            return v.fail(f"{path}: the backend returned host data of shape "
                          f"{list(t.values.shape)} for a tensor of shape {list(t.shape)}")
        if expect_device is not None and t.device != expect_device:
            return v.fail(f"{path}: on device {t.device}, expected {expect_device}")
        rtol, atol = tolerance(r.dtype, *tols)
        u = ulps.get(r.dtype) if ulps is not None else None
        m = compare(t.values, r.values, rtol, atol, u, v.stats)
        if m is not None:
            v.fail(f"{path}: {m.describe(rtol, atol)}")
            v.max_abs, v.max_rel, v.rtol, v.atol = m.max_abs, m.max_rel, rtol, atol
            v.max_ulp, v.ulp_budget = m.max_ulp, m.ulps
            return v
        if r.values.dtype.kind not in "biu" and r.values.size:
            v.rtol, v.atol = rtol, atol
    v.note(u)
    return v


def compare_bases(v, ref, tgt, tols, label="input", ulps=None):
    """Every input's storage after the call must match the reference's."""
    for i, (r, t) in enumerate(zip(ref.bases, tgt.bases)):
        if t.values.shape != r.values.shape:
            return v.fail(f"{label} {i}: the backend returned host data of shape "
                          f"{list(t.values.shape)} for a storage of shape {list(r.values.shape)}",
                          "fail")
        rtol, atol = tolerance(r.dtype, *tols)
        m = compare(t.values, r.values, rtol, atol, ulps.get(r.dtype) if ulps else None)
        if m is not None:
            return v.fail(f"{label} {i}'s storage after the call differs from the reference's: "
                          f"{m.describe(rtol, atol)}")
    return v


def check_forward(ref, tgt, sample, tols, expect_device, ulps=None):
    v = errors(ref, tgt, sample.error)
    if v is not None:
        return v
    v = Verdict()
    compare_items(v, ref.outputs, tgt.outputs, tols, expect_device, ulps=ulps)
    if v.outcome == "pass":
        changed = [i for i, (b, a) in enumerate(zip(ref.bases, sample_bases(sample)))
                   if not _same(b.values, a)]
        compare_bases(v, ref, tgt, tols)
        if v.outcome != "pass" and not changed and "storage after the call" in v.message:
            v.message = "the op modified its input (the reference does not): " + v.message
    return v


def sample_bases(sample):
    return [a.base for a in sample.arrays()]


def _same(x, y):
    return x.shape == y.shape and compare(x, y, 0.0, 0.0) is None


def check_grad(ref, tgt, tols):
    v = errors(ref, tgt, None, "the gradient ")
    if v is not None:
        return v
    v = Verdict()
    for key in ("n_outputs", "n_inputs"):
        if ref.extra.get(key) != tgt.extra.get(key):
            return v.fail(f"{tgt.extra.get(key)} {key[2:]} require grad; the reference has "
                          f"{ref.extra.get(key)}")
    for (path, r), (_, t) in zip(ref.outputs, tgt.outputs):
        if (r is None) != (t is None):
            return v.fail(f"{path}: {'no gradient' if t is None else 'a gradient'} where the "
                          f"reference has {'none' if r is None else 'one'}")
    return compare_items(v, ref.outputs, tgt.outputs, tols, what="gradient")


def check_inplace(ref, tgt, tols, expect_device, ulps=None):
    v = errors(ref, tgt, None, "the in-place variant ")
    if v is not None:
        return v
    v = Verdict()
    if ref.extra["returns_self"] and not tgt.extra["returns_self"]:
        return v.fail("the in-place variant did not return self")
    compare_items(v, ref.outputs, tgt.outputs, tols, expect_device, ulps=ulps)
    return compare_bases(v, ref, tgt, tols, "storage of input", ulps)


def check_alias(ref, tgt, tols):
    v = errors(ref, tgt, None, "writing through the view ")
    if v is not None:
        return v
    v = Verdict()
    if "skipped" in ref.extra:
        return None
    if "view_before" in ref.extra:
        if _same(ref.outputs[0][1].values, ref.extra["view_before"]):
            return v.fail("the reference's result does not alias its input: the case should "
                          "not declare alias=True")
    elif all(_same(b.values, a) for b, a in zip(ref.bases, ref.extra["before"])):
        return v.fail("the reference's result does not alias its input: the case should not "
                      "declare alias=True")
    compare_items(v, ref.outputs, tgt.outputs, tols)
    return compare_bases(v, ref, tgt, tols, "the viewed storage of input")
