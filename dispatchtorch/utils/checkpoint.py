"""torch.utils.checkpoint: activation checkpointing. A checkpointed segment's forward
runs without recording (its intermediates are freed at once); the backward runs it
again from the saved inputs, with the random state the forward had (so dropout draws
the same mask), and differentiates that. Memory for compute, as in PyTorch.

`use_reentrant=True` (the default when it is not passed, with PyTorch's warning) is
PyTorch's reentrant form: gradients reach the segment's parameters by a nested
`backward()` that accumulates into their `.grad`, so it needs an input that requires
grad and refuses `autograd.grad`. `use_reentrant=False` (what PyTorch recommends) takes
the parameters of the modules the function reaches (itself, its `self`, the modules its
closure and globals name) and the tensors requiring grad it names as inputs of the
recorded node: `autograd.grad`, keyword arguments and inputs that do not require grad
work. A tensor requiring grad the function reaches some other way is an error at the
backward, never a silently missing gradient. `context_fn` gives two context managers,
one around the forward and one around the recomputation, as in PyTorch; selective
activation checkpointing's (`create_selective_checkpoint_contexts`) keep what the policy
saves in the forward and hand it back in the recomputation instead of running the op
(_sac_modes.py; the ops a policy sees are this package's rows, as torch.ops.aten
packets). The recomputation always runs the whole segment: PyTorch's early
stop (`set_checkpoint_early_stop`) saves time, not values, and is accepted.
"""
from __future__ import annotations

import contextlib
import functools
import types
import warnings

import enum
from collections import defaultdict

from .. import ops as _ops
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import STATE, enable_grad, no_grad
from ..autograd.graph import leaves_reached
from ..nn.modules.module import Module
from ..ops.aten_namespace import OpOverload, OpOverloadPacket
from . import _sac_modes

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "check_backward_validity",
           "detach_variable", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS"]
_NO_GRAD_INPUTS = "None of the inputs have requires_grad=True. Gradients will be None"
_settings = {"early_stop": True, "debug": None}   # the two context managers' values below


class CheckpointError(RuntimeError):
    """torch.utils.checkpoint.CheckpointError: a checkpoint's recomputation disagreed
    with its forward."""


def check_backward_validity(inputs):
    """Warn, as PyTorch does, when no tensor among inputs requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn(_NO_GRAD_INPUTS, stacklevel=2)


def detach_variable(inputs):
    """The tensors of a tuple detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x
                 for x in inputs)


class DefaultDeviceType:
    """The device type whose random state checkpointing saves when no argument names a
    non-CPU device: unless set, the current accelerator's type, else "cpu" (PyTorch's
    rule; with OpenCL present that is "opencl")."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from ..accelerator import current_accelerator
            found = current_accelerator(True)
            DefaultDeviceType._default_device_type = found.type if found else "cpu"
        return DefaultDeviceType._default_device_type


@contextlib.contextmanager
def _setting(name, value):
    previous, _settings[name] = _settings[name], value
    try:
        yield
    finally:
        _settings[name] = previous


def set_checkpoint_early_stop(enable):
    """PyTorch's switch for stopping a recomputation once the tensors the backward needs
    exist. Recorded; here a recomputation always runs the whole segment (same values)."""
    return _setting("early_stop", enable)


def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's `debug` inside the block (None: each call's own)."""
    return _setting("debug", enabled)

_NOT_PASSED = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
               "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
               "exception. use_reentrant=False is recommended, but if you need to preserve the "
               "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
               "details on the differences between the two variants.")


def noop_context_fn():
    """The default context_fn: no context around the forward nor the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediates recomputed in the backward."""
    if use_reentrant is None:
        warnings.warn(_NOT_PASSED, stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    run = functools.partial(function, **kwargs) if kwargs else function
    tensors = [a for a in args if isinstance(a, Tensor)]
    if use_reentrant:
        if STATE.enabled and not any(t._rg for t in tensors):
            warnings.warn(_NO_GRAD_INPUTS, stacklevel=2)
        extra = ()
    else:
        extra = tuple(t for t in _reached_tensors(function) if t._rg and
                      all(t is not a for a in tensors))
    forward_context, recompute_context = context_fn()
    check = determinism_check == "default" and not use_reentrant
    spec = (run, bool(preserve_rng_state), use_reentrant, args, len(extra), recompute_context,
            check)
    with forward_context:
        return _Recompute.apply(spec, *tensors, *extra)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of modules) in `segments` checkpointed chunks; the last
    chunk runs as usual."""
    if use_reentrant is None:
        warnings.warn(_NOT_PASSED.replace("torch.utils.checkpoint:",
                                          "torch.utils.checkpoint.checkpoint_sequential:"),
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Module):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


class _Recompute(Function):
    @staticmethod
    def forward(ctx, spec, *tensors):
        run, preserve, reentrant, args, n_extra, _, check = spec
        ctx.spec = spec
        ctx.rng = _ops.get_rng_state() if preserve else None
        ctx.save_for_backward(*tensors[:len(tensors) - n_extra])
        ctx.extra = tensors[len(tensors) - n_extra:]
        with no_grad():
            outs = run(*args)
        ctx.metadata = _metadata(outs) if check else None
        return outs

    @staticmethod
    def backward(ctx, *grads):
        run, preserve, reentrant, args, n_extra, recompute_context, _ = ctx.spec
        if reentrant:
            pass_ = getattr(_engine._RUNNING, "run", None)
            if pass_ is not None and (not pass_.accumulate or pass_.only is not None):
                raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible "
                                   "with .grad() or passing an `inputs` parameter to .backward(). "
                                   "To resolve this error, you can either set use_reentrant=False, "
                                   "or call .backward() without passing the `inputs` argument.")
        saved = iter(ctx.saved_tensors)
        inputs = []
        for a in args:
            if isinstance(a, Tensor):
                d = next(saved).detach()
                d.requires_grad_(a._rg)
                inputs.append(d)
            else:
                inputs.append(a)
        with _rng_of(ctx.rng), enable_grad(), recompute_context:
            outs = run(*inputs)
        if ctx.metadata is not None and _metadata(outs) != ctx.metadata:
            raise CheckpointError(
                f"torch.utils.checkpoint: Recomputed values have different metadata than during "
                f"the forward pass (the function is not deterministic in its shapes, dtypes or "
                f"devices).\nforward: {ctx.metadata}\nrecomputed: {_metadata(outs)}\n"
                f"Pass determinism_check='none' to skip this check.")
        outs = outs if isinstance(outs, tuple) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o._rg and g is not None]
        leaves = [d for d in inputs if isinstance(d, Tensor)]
        wrt = [d for d in leaves if d._rg] + list(ctx.extra)
        if reentrant:
            if pairs:
                _engine.backward([o for o, _ in pairs], [g for _, g in pairs])
            got = {id(d): d.grad for d in leaves if d._rg}
        else:
            _check_reached(pairs, wrt)
            got = {}
            if pairs and wrt:
                found = _engine.grad([o for o, _ in pairs], wrt, [g for _, g in pairs],
                                     allow_unused=True)
                got = {id(t): g for t, g in zip(wrt, found)}
        return (None, *(got.get(id(d)) for d in leaves), *(got.get(id(t)) for t in ctx.extra))


def _metadata(outs):
    """(shape, dtype, device) of each tensor output: what the recomputation must repeat."""
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [(tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor) else None
            for o in outs]


class _rng_of:
    """The forward's random state while recomputing, the backward's own afterwards."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        if self.state is not None:
            self.outer = _ops.get_rng_state()
            _ops.set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            _ops.set_rng_state(self.outer)


def _reached_tensors(function):
    """The parameters and buffers of the modules `function` reaches by name (itself, a
    bound method's self, a partial's function and arguments, the modules and tensors
    its code names among its closure variables and globals)."""
    found, modules, seen = [], [], set()
    todo = [function]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, Module):
            modules.append(f)
        elif isinstance(f, Tensor):
            found.append(f)
        elif isinstance(f, functools.partial):
            todo.extend((f.func, *f.args, *f.keywords.values()))
        elif isinstance(f, types.MethodType):
            todo.extend((f.__func__, f.__self__))
        elif isinstance(f, types.FunctionType):
            names = set(f.__code__.co_names)
            todo.extend(v for n, v in f.__globals__.items() if n in names)
            for cell in f.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:
                    pass
        elif isinstance(f, (list, tuple)):
            todo.extend(f)
    for m in modules:
        found.extend(m.parameters())
    return list({id(t): t for t in found}.values())


def _check_reached(pairs, wrt):
    """Every tensor requiring grad the recomputed outputs depend on is among wrt."""
    roots = [o._grad_fn for o, _ in pairs if o._grad_fn is not None]
    unknown = leaves_reached(roots, [id(t) for t in wrt])
    if unknown:
        x = unknown[0]
        raise RuntimeError(
            f"torch.utils.checkpoint (use_reentrant=False): the checkpointed function uses a "
            f"tensor that requires grad ({x.dtype}{list(x.shape)}) which is neither an "
            f"argument nor a parameter of a module it names; pass it as an argument, or its "
            f"gradient would be lost")


# -- selective activation checkpointing ----------------------------------------------

class CheckpointPolicy(enum.Enum):
    """What a selective checkpointing policy answers for an op: save its output in the
    forward (MUST_SAVE / PREFER_SAVE) or run it again in the recomputation
    (MUST_RECOMPUTE / PREFER_RECOMPUTE). The CPU_OFFLOAD answers are refused: no
    offloading here."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = frozenset({CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE})
_OFFLOAD = frozenset({CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD})

# PyTorch ignores detach and metadata ops its checkpoint adds; no op here is added that
# way (views, detach and copies are not kernels the policy sees), so none is ignored
SAC_IGNORED_OPS: frozenset = frozenset()


class SelectiveCheckpointContext:
    """What a policy receives about the op it decides for: `op_output` (the op's output;
    for a kernel, a copy made on first access) and `is_recompute` (always False: the
    policy is only asked in the forward, as in PyTorch 2.13)."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self._op_output = op_output
        self._outputs = None

    @property
    def op_output(self):
        if self._outputs is not None:
            return _sac_modes.op_output(self)
        return self._op_output

    @op_output.setter
    def op_output(self, value):
        self._op_output, self._outputs = value, None


def _policy_from_list(ops):
    for op in ops:
        if not isinstance(op, OpOverload):
            extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, "
                     "if you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                     if isinstance(op, OpOverloadPacket) else "")
            raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of "
                             f"type {type(op)}. {extra}")

    def policy_fn(ctx, op, *args, **kwargs):
        if op in ops:
            return CheckpointPolicy.MUST_SAVE
        return CheckpointPolicy.PREFER_RECOMPUTE
    return policy_fn


def _checked(policy_fn):
    """The policy, refusing CPU offloading (not implemented) by name."""
    def asked(ctx, op, *args, **kwargs):
        answer = policy_fn(ctx, op, *args, **kwargs)
        if answer in _OFFLOAD:
            raise NotImplementedError(f"selective activation checkpointing: {answer} (for {op}) "
                                      f"is not implemented in dispatchtorch (no CPU offloading)")
        return answer
    return asked


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """checkpoint's `context_fn` for selective activation checkpointing: the policy (or a
    list of `torch.ops.aten.<op>.default` to save) decides, op by op in the forward, what
    is saved; the recomputation gets those outputs back instead of running the ops.

    allow_cache_entry_mutation is accepted: the saved outputs are copies, so mutating the
    forward's tensors never changes them (PyTorch raises unless it is True)."""
    if isinstance(policy_fn_or_list, list):
        policy_fn = _policy_from_list(policy_fn_or_list)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return (_sac_modes.CachingMode(_checked(policy_fn), storage, SelectiveCheckpointContext,
                                   _SAVE),
            _sac_modes.CachedMode(storage))
