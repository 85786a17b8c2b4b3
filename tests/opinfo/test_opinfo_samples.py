"""PyTorch's own OpInfo samples, run through dispatchtorch (dev only: needs torch and
expecttest). One test per OpInfo entry and dtype that dispatchtorch has: every sample's
values, shape, dtype and gradient must match PyTorch's, except the entries listed in
KNOWN below with the reason. Absent ops are skipped here and counted by
opinfo_counts.py (docs/opinfo.md)."""
import pytest

pytest.importorskip("expecttest")
torch = pytest.importorskip("torch")

from opinfo_harness import SKIP, dt_dtype, op_names, present, run_errors, run_op  # noqa: E402

DTYPES = ("float32", "float64", "complex64")
# samples per entry in CI: the first ones cover every argument form OpInfo writes first;
# `opinfo_counts.py` runs them all
LIMIT = 8

# Entries whose samples do not all match yet, and why. A fixed one fails nothing; remove it.
KNOWN = {
    # deliberate: the true gradient of the loss; PyTorch's CTC kernel returns the gradient
    # with respect to the logits before log_softmax (docs/nn.md; tests/nn compare that way)
    "nn.functional.ctc_loss": "gradient: the true derivative (docs/nn.md)",
    # strided views past the end of the storage: dispatchtorch checks the storage size
    # of the base, PyTorch of the whole storage
    "as_strided.partial_views": "views reaching outside the viewed tensor",
    # PyTorch's as_strided_scatter_backward gives self the gradient inside the scattered
    # region (zero outside); the true derivative (ours, as finite differences) is the reverse
    "as_strided_scatter": "PyTorch's self-gradient is that of the scattered region",
    # PyTorch's float32 logcumsumexp gradient (a log-space formula) is 2e-3 off the float64
    # answer on these samples; ours (autograd through the scan) 2e-7
    "logcumsumexp": "PyTorch's own float32 gradient rounding",
    # listed in the issue as mismatching today
    # PyTorch's float32 matrix_exp is 5e-2 off scipy's float64 expm where entries reach 1e5
    # (ours: 2e-3, squaring in float64)
    "matrix_exp": "PyTorch's own float32 rounding",
    # PyTorch's float64 Bessel approximations are accurate to ~1e-7; ours (scipy's Cephes)
    # to 1e-16 (checked against mpmath): the samples differ beyond float64's tolerance
    **dict.fromkeys(["special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                     "special.bessel_y1"], "PyTorch's float64 Bessel functions are ~1e-7 off"),
}


# complex64 only (docs/complex-and-fft.md): what does not match on complex inputs yet
KNOWN_COMPLEX64 = {
    # PyTorch's float32 gradient exp(x - result) loses the phase where imaginary parts
    # reach 1e6 (a 0-d input's true gradient is exactly 1; PyTorch's 0.9997+0.0226j)
    "logsumexp": "PyTorch's own float32 rounding of large imaginary parts",
    "istft": "PyTorch leaves the window without a gradient; dispatchtorch differentiates it",
    # PyTorch's complex renorm gradient with p=inf is NaN everywhere; ours is the derivative
    # of vector_norm(inf) (which matches PyTorch's own vector_norm gradient)
    "renorm": "PyTorch's complex p=inf gradient is NaN",
}


def _entries():
    db = [i for i in op_names() if i.name not in SKIP]
    out = []
    for dtype in DTYPES:
        if dt_dtype(dtype) is None:
            continue
        td = getattr(torch, dtype)
        for info in db:
            if td in info.supported_dtypes("cpu") and present(info):
                key = info.name + ("." + info.variant_test_name if info.variant_test_name else "")
                out.append(pytest.param(info, dtype, id=f"{dtype}-{key}"))
    return out


def _key(info):
    return info.name + ("." + info.variant_test_name if info.variant_test_name else "")


@pytest.mark.parametrize("info,dtype", _entries())
def test_opinfo_samples_match_pytorch(info, dtype):
    r = run_op(info, dtype, LIMIT)
    known = KNOWN.get(_key(info)) or KNOWN.get(info.name)
    if dtype == "complex64":
        known = known or KNOWN_COMPLEX64.get(_key(info)) or KNOWN_COMPLEX64.get(info.name)
    if r.failures and known:
        pytest.xfail(f"{known}: {r.failures[0]}")
    assert not r.failures, f"{_key(info)} on {dtype}: {len(r.failures)} mismatches: " \
                           f"{r.failures[:3]}"


# Error inputs whose exception class is not PyTorch's yet, and why.
KNOWN_ERRORS = {
}


def _error_entries():
    return [pytest.param(info, id=_key(info)) for info in op_names()
            if info.name not in SKIP and info.error_inputs_func is not None and present(info)]


@pytest.mark.parametrize("info", _error_entries())
def test_opinfo_error_inputs_raise_pytorchs_exception(info):
    r = run_errors(info, LIMIT)
    known = KNOWN_ERRORS.get(_key(info)) or KNOWN_ERRORS.get(info.name)
    if r.failures and known:
        pytest.xfail(f"{known}: {r.failures[0]}")
    assert not r.failures, f"{_key(info)}: {len(r.failures)} error inputs: {r.failures[:3]}"


# -- out= (float32, first sample) of every public function an OpInfo entry names (torch.*,
# linalg, special, fft, nn.functional): the returned object is `out` (None where PyTorch
# returns None: the list-out copies), holding the out-of-place result; where PyTorch takes no out= (OpInfo's supports_out=False, confirmed
# by calling PyTorch: OpInfo says False for sum, prod, median, ... which do take it),
# dispatchtorch takes none either. Entries that cannot be checked yet, and why (a sample
# that cannot say, "unchecked: ..." from run_out, is skipped).
KNOWN_OUT = {
    # nn ops, on the training hot path (ops/nn_ops, nn/functional): out= not added yet
    # native_batch_norm updates the running statistics in place before out= could be
    # checked, so a bad out= would leave them changed: not taken until it checks first
    "native_batch_norm": "no out= yet (running statistics would change before the check)",
    # PyTorch's std/var(input, unbiased) overload takes no out= (its dim overload does);
    # dispatchtorch has one signature, whose out= is honoured
    **dict.fromkeys(["std.unbiased", "var.unbiased"], "one signature for both overloads"),
}


def _out_entries():
    from opinfo_harness import public_function
    return [pytest.param(info, id=_key(info)) for info in op_names()
            if info.name not in SKIP and public_function(info) is not None
            and torch.float32 in info.supported_dtypes("cpu")]


@pytest.mark.parametrize("info", _out_entries())
def test_opinfo_out_argument(info):
    from opinfo_harness import out_sample, public_function, run_out, takes_out_kw
    fn = public_function(info)
    accepts = takes_out_kw(fn)
    if accepts is False and not info.supports_out:
        return                 # neither side takes out= (PyTorch not asked: CI time)
    sample = out_sample(info)
    if sample is None:
        why = "PyTorch takes no out=, dispatchtorch does" if accepts is True else None
    elif accepts is False:
        why = "PyTorch takes out=, dispatchtorch does not"
    else:
        why = run_out(fn, sample, info)
    known = KNOWN_OUT.get(_key(info)) or KNOWN_OUT.get(info.name)
    if why and known:
        pytest.xfail(f"{known}: {why}")
    if why and why.startswith("unchecked"):
        pytest.skip(why)
    assert why is None, f"{_key(info)}: {why}"


# Public functions with an `out` parameter that no OpInfo entry names (so the sweep above
# does not reach them), and why. A new one fails test_every_out_function_is_swept.
NOT_IN_OPINFO = {
    # random values: OpInfo's entries for them are in SKIP (or lambdas)
    **dict.fromkeys(["bernoulli", "multinomial", "normal", "rand", "randint", "randn",
                     "randperm"], "random values"),
    # OpInfo drives these through lambdas or methods, which take no out=
    **dict.fromkeys(["polygamma", "special.polygamma", "where", "detach_copy",
                     "select_copy"], "OpInfo's entry is a lambda"),
    # random counts, no OpInfo entry
    **dict.fromkeys(["poisson", "binomial"], "random counts (tests/api/"
                    "test_torch_level_names_vs_pytorch.py compares them with PyTorch's)"),
    # creation ops without an OpInfo entry (range: torch.range, deprecated)
    **dict.fromkeys(["fft.fftfreq", "fft.rfftfreq", "range"], "no OpInfo entry"),
    # deprecated torch-level forms PyTorch's OpInfo does not list (linalg's are swept)
    **dict.fromkeys(["chain_matmul", "frobenius_norm", "nuclear_norm"],
                    "deprecated, no OpInfo entry"),
    # copies of views with no OpInfo entry (tests/api/test_copies_vs_pytorch.py checks out=)
    **dict.fromkeys(["slice_copy", "split_copy", "view_as_real_copy", "view_as_complex_copy",
                     "indices_copy", "values_copy", "crow_indices_copy", "col_indices_copy",
                     "row_indices_copy", "ccol_indices_copy"], "no OpInfo entry"),
    # dispatchtorch's relu is an elementwise row, whose function form takes out=;
    # PyTorch's torch.relu takes none (harmless: the out= it takes is honoured)
    "relu": "an elementwise row's out= (PyTorch's relu has none)",
}


def test_every_out_function_is_swept():
    from opinfo_harness import public_function, public_with_out
    import inspect
    # by the function under any wrapper: autocast (once used in this process) wraps torch.cat
    # but not its alias torch.concat
    named = {id(inspect.unwrap(public_function(i))) for i in op_names()
             if public_function(i) is not None}
    unswept = sorted(n for n, f in public_with_out().items()
                     if id(inspect.unwrap(f)) not in named and n not in NOT_IN_OPINFO)
    assert not unswept, f"out= functions no OpInfo entry names (add to NOT_IN_OPINFO): {unswept}"
