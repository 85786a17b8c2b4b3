"""PyTorch's OpInfo samples driven through dispatchtorch, by op name.

Every entry of `torch.testing._internal.common_methods_invocations.op_db` names an op
and yields sample inputs. Each sample runs on PyTorch (the answer) and, converted, on
dispatchtorch through the same public form OpInfo names: `torch.NAME` (dotted names
reach `linalg`, `special`, `fft`, `nn.functional`), else the `Tensor` method or
attribute NAME, else (OpInfo's lambdas) the lambda itself with `torch` rebound to
dispatchtorch. Values, shapes, dtypes and gradients (of a fixed random weighting of the
floating outputs) are compared. Used by test_opinfo_samples.py and opinfo_counts.py.
"""
from __future__ import annotations

import itertools
import types
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

import dispatchtorch as dt

# What cannot be compared with PyTorch sample by sample, and why.
SKIP = {
    # random values (a different generator): not comparable value for value
    **dict.fromkeys([
        "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
        "uniform", "rand_like", "randn", "randn_like", "randint", "randint_like",
        "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
        "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
        "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
        "nn.functional.fractional_max_pool3d", "svd_lowrank", "pca_lowrank",
        "nn.functional.multi_head_attention_forward",   # dropout inside
    ], "random values"),
    # uninitialised memory: only a shape to compare, and nothing to learn from it
    **dict.fromkeys(["empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
                     "empty_permuted"], "uninitialised values"),
    # CUDA-only or sparse-only entries
    **dict.fromkeys(["jiterator_unary", "jiterator_binary", "jiterator_4inputs_with_extra_args",
                     "jiterator_binary_return_by_ref", "jiterator_2inputs_2outputs",
                     "to_sparse"], "CUDA jiterator or sparse layout"),
    # resize_ leaves new elements uninitialised
    "resize_": "uninitialised values", "resize_as_": "uninitialised values",
}


def random_sample(info, sample):
    """A sample whose result is random although its op is not (dropout inside an op)."""
    return info.name == "nn.functional.scaled_dot_product_attention" and \
        sample.kwargs.get("dropout_p", 0.0) > 0


# per dtype: (rtol, atol) of forward values, then of gradients
TOLERANCE = {
    "float32": ((1e-4, 1e-5), (1e-3, 1e-4)),
    "float64": ((1e-7, 1e-7), (1e-6, 1e-6)),
    "complex64": ((1e-4, 1e-5), (1e-3, 1e-4)),
}


class Absent(Exception):
    """dispatchtorch has no such op (or no such argument form of it)."""


def dt_dtype(name):
    return getattr(dt, name, None)


def op_names():
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo import core
    # PyTorch's sample iterators crawl the whole stack (inspect.stack(): ~90 ms a sample,
    # three quarters of these tests' time) for the unittest.TestCase running them, to
    # pin each sample to it; a pytest function is none, so the crawl always ends in None
    # and the seeds are SEED either way
    common_utils.extract_test_fn = core.extract_test_fn = lambda: None
    return op_db


def _path(root, name):
    obj = root
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def resolve(info):
    """The dispatchtorch callable for an OpInfo entry, or None when it has none."""
    name, fn = info.name, info.op
    if _path(torch, name) is fn:
        return _path(dt, name)
    if getattr(torch.Tensor, name, None) is fn or isinstance(fn, types.LambdaType) and \
            fn.__name__ != "<lambda>" and hasattr(torch.Tensor, name):
        m = getattr(dt.Tensor, name, None)
        return None if m is None else (lambda x, *a, **k: getattr(x, name)(*a, **k))
    if isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>":
        present = _path(dt, name) is not None or getattr(dt.Tensor, name, None) is not None
        if not present:
            return None
        g = dict(fn.__globals__)
        g["torch"] = dt
        return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    return None


def present(info):
    return info.name not in SKIP and resolve(info) is not None


# -- conversion --------------------------------------------------------------------------

def _aliased(x, memo):
    """x as a view of one dispatchtorch tensor per PyTorch storage (same strides and offset),
    so that error inputs whose `out=` overlaps an input (or is expanded) stay so."""
    storage = x.untyped_storage()
    key = (storage.data_ptr(), x.dtype)
    base = memo.get(key)
    if base is None:
        whole = torch.empty(0, dtype=x.dtype).set_(storage, 0, (storage.nbytes() // x.element_size(),))
        base = memo[key] = dt.tensor(whole.numpy(), dtype=dt_dtype(str(x.dtype)[6:]))
    return dt.as_strided(base, tuple(x.shape), x.stride(), x.storage_offset())


def to_dt(x, leaves, memo=None):
    """A torch value as dispatchtorch's; tensors that require grad become leaves. With a
    memo, tensors sharing a PyTorch storage share one dispatchtorch storage too."""
    if isinstance(x, torch.Tensor) and x._is_zerotensor():     # PyTorch's lazy zeros
        x = torch.zeros(x.shape, dtype=x.dtype, requires_grad=x.requires_grad)
    if isinstance(x, torch.Tensor) and memo is not None and not x.requires_grad and \
            x.layout == torch.strided and not x.is_complex() and x.device.type == "cpu" and \
            dt_dtype(str(x.dtype)[6:]) is not None and x.dtype is not torch.bfloat16:
        return _aliased(x, memo)
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided or x.is_complex() and dt_dtype("complex64") is None:
            raise Absent(f"{x.layout} / {x.dtype} input")
        r = dt.tensor(x.detach().cpu().resolve_conj().resolve_neg().numpy(),
                      dtype=dt_dtype(str(x.dtype)[6:]))
        if x.requires_grad:
            r.requires_grad_(True)
            leaves.append((x, r))
        return r
    if isinstance(x, torch.dtype):
        d = dt_dtype(str(x)[6:])
        if d is None:
            raise Absent(f"dtype {x}")
        return d
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.device):
        return x.type
    if isinstance(x, torch.layout):   # dispatchtorch has only strided tensors: layout=None
        if x != torch.strided:
            raise Absent(f"layout {x}")
        return getattr(dt, "strided", None)
    if isinstance(x, torch.memory_format):
        m = getattr(dt, str(x)[6:], None)
        if m is None:
            raise Absent(f"memory format {x}")
        return m
    if isinstance(x, torch.Generator):
        raise Absent("generator argument")
    if isinstance(x, torch.nn.Module):
        return _module_to_dt(x)
    if isinstance(x, (list, tuple)):
        return type(x)(to_dt(v, leaves, memo) for v in x) if not hasattr(x, "_fields") else \
            type(x)(*(to_dt(v, leaves, memo) for v in x))
    if isinstance(x, dict):
        return {k: to_dt(v, leaves, memo) for k, v in x.items()}
    return x


def _module_to_dt(m):
    """A parameterless PyTorch layer passed as an argument (a distance function): ours of
    the same class, with the same settings."""
    cls = getattr(dt.nn, type(m).__name__, None)
    if cls is None or any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        raise Absent(f"layer argument {type(m).__name__}")
    ours = cls()
    for k, v in vars(m).items():
        if not k.startswith("_") and isinstance(v, (bool, int, float, str)) and hasattr(ours, k):
            setattr(ours, k, v)
    return ours


def flat(out):
    """The tensors and Python numbers of an op's result, in order."""
    if isinstance(out, (list, tuple)):
        return [y for v in out for y in flat(v)]
    return [out]


def as_numpy(x):
    if isinstance(x, torch.Tensor):
        x = x.detach().resolve_conj().resolve_neg()
        if x._is_zerotensor():        # PyTorch's lazy zeros (gradients that are zero)
            x = torch.zeros(x.shape, dtype=x.dtype)
        return (x.float() if x.dtype is torch.bfloat16 else x).numpy()   # numpy has no bf16
    if isinstance(x, dt.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _dtype_name(x):
    if isinstance(x, torch.Tensor):
        return str(x.dtype)[6:]
    if isinstance(x, dt.Tensor):
        return x.dtype.name
    return type(x).__name__


def compare(expected, got, tol, what):
    """None when they match, else the reason."""
    if len(expected) != len(got):
        return f"{what}: {len(expected)} outputs expected, got {len(got)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is None or g is None:
            if e is not None and bool(torch.any(e != 0)) or g is not None and \
                    bool((as_numpy(g) != 0).any()):
                return f"{what}[{i}]: one side has no value ({e is None}, {g is None})"
            continue
        if isinstance(e, torch.Tensor) != isinstance(g, dt.Tensor):
            return f"{what}[{i}]: type {type(e).__name__} expected, got {type(g).__name__}"
        if _dtype_name(e) != _dtype_name(g) and isinstance(e, torch.Tensor):
            return f"{what}[{i}]: dtype {_dtype_name(e)} expected, got {_dtype_name(g)}"
        ev, gv = as_numpy(e), as_numpy(g)
        if ev.shape != gv.shape:
            return f"{what}[{i}]: shape {ev.shape} expected, got {gv.shape}"
        if ev.dtype.kind in "fc":
            ok = np.isclose(gv.astype(ev.dtype), ev, rtol=tol[0], atol=tol[1], equal_nan=True)
            if not ok.all():
                err = np.nanmax(np.abs(gv.astype(np.float64) - ev.astype(np.float64)))
                return f"{what}[{i}]: values differ (max abs error {err:.3g})"
        elif not np.array_equal(gv, ev):
            return f"{what}[{i}]: values differ"
    return None


# -- one sample ----------------------------------------------------------------------------

@dataclass
class Outcome:
    forward: bool | None = None      # None: not compared (absent form, or PyTorch raised)
    gradient: bool | None = None
    reason: str = ""


def _weights(outs, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(o.shape, generator=g, dtype=o.dtype)
            if isinstance(o, torch.Tensor) and o.is_floating_point() or
            isinstance(o, torch.Tensor) and o.is_complex() else None for o in outs]


def _real_loss(x):
    """A complex output enters the loss by its real part (a real loss, as backward needs:
    the gradients follow PyTorch's conjugate Wirtinger convention)."""
    return x.real if x.is_complex() else x


def _processes(post):
    """Whether output_process_fn_grad is more than OpInfo's identity default."""
    code = getattr(post, "__code__", None)
    return code is not None and code.co_code != (lambda x: x).__code__.co_code


def run_sample(info, fn, sample, dtype, grad):
    """Run one sample on both libraries and compare."""
    (ftol, gtol) = TOLERANCE[dtype]
    res = Outcome()
    args = (sample.input, *sample.args)
    leaves = []
    if random_sample(info, sample):
        res.reason = "random values"
        return res
    try:                              # converted first: in-place ops overwrite their input
        dargs = to_dt(args, leaves)
        dkw = to_dt(sample.kwargs, leaves)
    except Absent as exc:
        res.reason = f"absent: {exc}"
        return res
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = info.op(*args, **sample.kwargs)
    except Exception:                 # PyTorch itself refuses this sample: nothing to compare
        return res
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = fn(*dargs, **dkw)
    except Exception as exc:
        res.forward = False
        res.reason = f"forward raised {type(exc).__name__}: {str(exc)[:160]}"
        return res
    # decompositions are unique only up to signs of singular vectors and the like: a
    # sample that says so (OpInfo's output_process_fn_grad, which PyTorch's own gradient
    # checks apply) is compared through it, on both sides
    post = sample.output_process_fn_grad
    if post is not None and _processes(post):
        try:
            expected, got = post(expected), post(got)
        except Exception:             # written in torch functions only: compare as is
            pass
    eo, go = flat(expected), flat(got)
    why = compare(eo, go, ftol, "output")
    res.forward = why is None
    res.reason = why or ""
    if not (grad and res.forward and leaves):
        return res
    ws = _weights(eo, 1234)
    pairs = [(e, g, w) for e, g, w in zip(eo, go, ws) if w is not None and e.requires_grad]
    if not pairs:
        return res
    tl = sum(_real_loss((e * w).sum()) for e, _, w in pairs)
    tin = [t for t, _ in leaves]
    try:
        eg = torch.autograd.grad(tl, tin, allow_unused=True)
    except Exception:
        return res
    try:                              # outputs that do not require grad: zero gradients
        live = [(g, w) for _, g, w in pairs if isinstance(g, dt.Tensor) and g.requires_grad]
        dl = sum(_real_loss((g * dt.tensor(as_numpy(w)).to(g.dtype)).sum()) for g, w in live)
        gg = dt.autograd.grad(dl, [d for _, d in leaves], allow_unused=True) if live else \
            [None] * len(leaves)
    except Exception as exc:
        res.gradient = False
        res.reason = f"backward raised {type(exc).__name__}: {str(exc)[:160]}"
        return res
    why = compare(list(eg), list(gg), gtol, "gradient")
    res.gradient = why is None
    res.reason = why or ""
    return res


@dataclass
class OpResult:
    name: str
    samples: int = 0
    forward: int = 0
    fmatch: int = 0
    gradient: int = 0
    gmatch: int = 0
    failures: list = field(default_factory=list)


def run_op(info, dtype, limit=None, grad=True):
    """Every (or the first `limit`) sample of one OpInfo entry on one dtype."""
    r = OpResult(info.name)
    fn = resolve(info)
    td = getattr(torch, dtype)
    if fn is None or td not in info.supported_dtypes("cpu"):
        return r
    needs_grad = grad and info.supports_autograd and (td.is_floating_point or td.is_complex)
    torch.manual_seed(0)
    try:
        samples = info.sample_inputs("cpu", td, requires_grad=needs_grad)
        for i, s in enumerate(samples):
            if limit is not None and i >= limit:
                break
            o = run_sample(info, fn, s, dtype, needs_grad)
            r.samples += 1
            if o.forward is not None:
                r.forward += 1
                r.fmatch += o.forward
            if o.gradient is not None:
                r.gradient += 1
                r.gmatch += o.gradient
            if o.forward is False or o.gradient is False:
                r.failures.append(o.reason)
    except Exception as exc:          # PyTorch's sample generator itself failed
        r.failures.append(f"samples: {type(exc).__name__}: {exc}")
    return r


# -- error inputs ----------------------------------------------------------------------------

@dataclass
class ErrorResult:
    name: str
    compared: int = 0                 # error inputs PyTorch refuses as OpInfo says
    type_match: int = 0               # ours raises the same exception class
    message_match: int = 0            # ... with a message OpInfo's regex accepts
    failures: list = field(default_factory=list)


def run_errors(info, limit=None):
    """OpInfo's error inputs: each must raise PyTorch's exception class on dispatchtorch
    too (the message is counted apart: OpInfo's regex is PyTorch's wording)."""
    import re
    r = ErrorResult(info.name)
    fn = resolve(info)
    if fn is None or info.error_inputs_func is None:
        return r
    try:                              # made lazily: the first `limit` only
        errors = list(itertools.islice(info.error_inputs("cpu"), limit))
    except Exception as exc:          # PyTorch's own generator failed
        r.failures.append(f"error inputs: {type(exc).__name__}: {exc}")
        return r
    for i, ei in enumerate(errors):
        s = ei.sample_input
        args = (s.input, *s.args)
        if getattr(torch.Tensor, info.name, None) is info.op and \
                not isinstance(s.input, torch.Tensor):
            continue                  # a C descriptor refusing a non-Tensor self: no user form
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                info.op(*args, **s.kwargs)
            continue                  # PyTorch's CPU build accepts it: nothing to compare
        except ei.error_type:
            pass
        except Exception:
            continue
        try:
            memo = {}
            dargs, dkw = to_dt(args, [], memo), to_dt(s.kwargs, [], memo)
        except Exception:             # not representable here (absent dtypes, > 64 dims)
            continue
        r.compared += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(*dargs, **dkw)
        except ei.error_type as exc:
            r.type_match += 1
            r.message_match += bool(re.search(ei.error_regex, str(exc)))
            continue
        except Exception as exc:
            r.failures.append(f"error input {i}: {ei.error_type.__name__} expected, got "
                              f"{type(exc).__name__}: {str(exc)[:120]}")
            continue
        r.failures.append(f"error input {i}: {ei.error_type.__name__} expected, none raised "
                          f"({ei.error_regex!r})")
    return r


# -- out= ------------------------------------------------------------------------------

def public_function(info):
    """The dispatchtorch function (torch.NAME, torch.linalg.NAME, ...) an entry names, or None
    (methods and OpInfo's lambdas take no out=)."""
    return _path(dt, info.name) if _path(torch, info.name) is info.op else None


def takes_out_kw(fn):
    """Whether fn's signature has `out` (None: it takes **kwargs, so cannot be told)."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if "out" in params:
        return True
    return None if any(p.kind is p.VAR_KEYWORD for p in params.values()) else False


def _pytorch_out_ok(info, sample):
    """Whether PyTorch takes out= with this sample (False: a TypeError naming out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            return False
        many = isinstance(ref, (tuple, list))
        if not all(isinstance(r, torch.Tensor) for r in (ref if many else [ref])):
            return False          # a Python value: nothing to write into
        outs = [torch.empty(0, dtype=r.dtype) for r in (ref if many else [ref])]
        try:
            info.op(sample.input, *sample.args, **sample.kwargs,
                    out=tuple(outs) if many else outs[0])
        except TypeError:         # no out= in this overload (or not these arguments)
            return False
        except Exception:         # out= taken, then refused (a RuntimeError on its shape)
            return True
    return True


def out_sample(info, dtype="float32", limit=8):
    """The sample to drive out= with: the first of `limit` that PyTorch takes out= with,
    None where it takes none. PyTorch is asked, not OpInfo's supports_out: that is False
    for sum, prod, median, ..., which take out= in some of their overloads, and True for
    equal, which takes none."""
    samples = itertools.islice(info.sample_inputs("cpu", getattr(torch, dtype)), limit)
    return next((s for s in samples if _pytorch_out_ok(info, s)), None)


def _pytorch_out_returns_none(info, sample):
    """Whether PyTorch's out= call returns None (its `Tensor(a!)[] out` overloads:
    unbind_copy, split_with_sizes_copy) rather than the out tensor(s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = info.op(sample.input, *sample.args, **sample.kwargs)
        many = isinstance(ref, (tuple, list))
        outs = [torch.empty(0, dtype=r.dtype) for r in (ref if many else [ref])]
        return info.op(sample.input, *sample.args, **sample.kwargs,
                       out=tuple(outs) if many else outs[0]) is None


def run_out(fn, sample, info):
    """The sample through fn with out= (empty tensors of the result's dtypes): None when
    the returned object is what PyTorch's is (the out tensor(s), or None where PyTorch
    returns None) and out holds the out-of-place result, else why; "unchecked: ..." when
    the sample cannot say."""
    for sample in (sample,):
        leaves = []
        try:
            dargs = to_dt((sample.input, *sample.args), leaves)
            dkw = to_dt(sample.kwargs, leaves)
        except Absent as exc:
            return f"unchecked: absent: {exc}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = fn(*dargs, **dkw)
            except Exception as exc:
                return f"unchecked: the sample raised {type(exc).__name__}"
            many = isinstance(ref, (tuple, list))
            refs = list(ref) if many else [ref]
            if not all(isinstance(r, dt.Tensor) for r in refs):
                return "unchecked: a result that is not a tensor"
            outs = [dt.empty(0, dtype=r.dtype) for r in refs]
            try:
                got = fn(*dargs, **dkw, out=tuple(outs) if many else outs[0])
            except Exception as exc:
                return f"out= raised {type(exc).__name__}: {str(exc)[:120]}"
        if _pytorch_out_returns_none(info, sample):
            if got is not None:
                return "out= returned an object where PyTorch returns None"
        else:
            gots = list(got) if many and isinstance(got, (tuple, list)) else [got]
            if len(gots) != len(outs) or any(g is not o for g, o in zip(gots, outs)):
                return "the returned object is not the out tensor(s)"
        for o, r in zip(outs, refs):
            if tuple(o.shape) != tuple(r.shape) or not np.allclose(
                    as_numpy(o), as_numpy(r), rtol=1e-5, atol=1e-6, equal_nan=True):
                return "out holds another value than the out-of-place result"
        return None


def public_with_out():
    """{name: function} of the public functions (torch.*, linalg, special, fft,
    nn.functional) whose signature has an `out` parameter."""
    import dispatchtorch.nn.functional  # noqa: F401
    found = {}
    for prefix, mod in (("", dt), ("linalg.", dt.linalg), ("special.", dt.special),
                        ("fft.", dt.fft), ("nn.functional.", dt.nn.functional)):
        for n in dir(mod):
            f = getattr(mod, n)
            if not n.startswith("_") and callable(f) and not isinstance(f, type) and \
                    takes_out_kw(f) is True:
                found[prefix + n] = f
    return found
