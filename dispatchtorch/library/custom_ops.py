"""torch.library.custom_op and CustomOpDef: a Python function made an op with a schema,
per-device kernels, a fake (meta) kernel, an autograd formula and a torch.ops entry.

A call binds and checks its arguments against the schema, picks the kernel by the
tensors' device type, runs it below autograd (no_grad, as PyTorch's kernels run below the
Autograd key), bumps the version of every mutated tensor and refuses outputs that alias
inputs. Ordinary ops never pass through here: nothing is added to their path."""
from __future__ import annotations

import contextlib
import inspect

from ..autograd.grad_mode import STATE, no_grad
from .._inplace import bump
from .._tensor import Tensor
from . import _autograd, _binding
from ._ops_namespace import add_to_namespace
from ._schema import check_name, infer_schema, parse_schema

# the device types PyTorch's register_kernel accepts (a kernel for one no backend here has is
# kept, never chosen: a PyTorch program registering an "mps" kernel still runs)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
OPDEFS = {}                      # qualname -> CustomOpDef (the newest definition wins)


def _detached(v):
    # kernels run below autograd: they see the tensors without their history (x.numpy()
    # works on an input that requires grad, as in PyTorch); detach keeps memory and version
    if isinstance(v, Tensor):
        return v.detach()
    if isinstance(v, (list, tuple)) and any(isinstance(e, Tensor) for e in v):
        return type(v)(e.detach() if isinstance(e, Tensor) else e for e in v)
    return v


def _device_type(tensors):
    types = {t.device.type for t in tensors}
    if len(types) > 1:              # as PyTorch's key priority: an accelerator over cpu
        types.discard("cpu")
    return next(iter(sorted(types))) if types else None


class CustomOpDef:
    """What custom_op returns: callable, with the register_* methods (PyTorch's CustomOpDef)."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._init_fn = fn
        self._parsed = parse_schema(schema)
        self._decl = f"{self._qualname}{schema}"
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = self._backward_fn = None
        self._disabled_kernel = set()
        self._defined_by = None         # the Library that defined it (Library.define)
        self._implicit_fn = self._autograd_impl = None   # Library.impl's two modes
        self._function = _autograd.make_function(self)
        has_tensor = any(a.type.startswith("Tensor") for a in self._parsed.args)
        if any(a.kw_only and a.type.startswith("Tensor") for a in self._parsed.args):
            raise NotImplementedError("custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {name}{schema}")
        self._device_arg = None if has_tensor else next(
            (i for i, a in enumerate(self._parsed.args) if a.type == "Device"), None)
        OPDEFS[self._qualname] = self
        add_to_namespace(self)

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    @property
    def _packet_name(self):
        return f"{self._namespace}.{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # ---- registration -------------------------------------------------------------

    def register_kernel(self, device_types, fn=None, /):
        """The implementation for these device types ("cpu", "opencl", "cuda", "meta"; None:
        every device type without its own). Usable as a decorator."""
        kinds = [device_types] if device_types is None or isinstance(device_types, str) \
            else list(device_types)
        for k in kinds:
            if k is not None and k not in DEVICE_TYPES:
                raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at "
                                   f"start of device string: {k}")
        if device_types is not None and self._device_arg is None and not any(
                a.type.startswith("Tensor") for a in self._parsed.args):
            raise ValueError("Functions without tensor inputs are required to have a "
                             "`device: torch.device` argument")

        def inner(fn):
            for k in kinds:
                self._backend_fns[k] = fn
            return fn
        return inner if fn is None else inner(fn)

    def register_fake(self, fn, /):
        """The shape function: used when the op is called on meta tensors."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """backward(ctx, *grads) and setup_context(ctx, inputs, output), as autograd.Function's."""
        if self._parsed.mutated:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {self._decl}. Please create a functional "
                               "operator and register an autograd formula for that.")
        self._backward_fn, self._setup_context_fn = backward, setup_context

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Within the block, `device_type`'s registered kernel is off (the op's own function
        runs instead) or back on."""
        was = device_type in self._disabled_kernel
        (self._disabled_kernel.discard if enabled else self._disabled_kernel.add)(device_type)
        try:
            yield
        finally:
            (self._disabled_kernel.add if was else self._disabled_kernel.discard)(device_type)

    # ---- calling ------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        pos, kw = _binding.bind(self._qualname, self._decl, self._parsed, args, kwargs)
        if self._implicit_fn is not None:       # CompositeImplicitAutograd: its ops record
            return self._implicit_fn(*pos, **kw)
        if STATE.enabled and any(t._rg for t in _binding.tensors_of(pos)):
            if self._autograd_impl is not None:
                return self._autograd_impl(*pos, **kw)
            return _autograd.apply(self._function, pos, kw)
        with no_grad():
            return self._run_kernel(pos, kw)

    def _kernel_for(self, pos):
        kind = (_device_type(_binding.tensors_of(pos)) if self._device_arg is None
                else str(pos[self._device_arg]).split(":")[0])
        if kind in self._disabled_kernel and self._init_fn is not None:
            return self._init_fn
        fn = self._backend_fns.get(kind)
        if fn is not None:
            return fn
        if kind == "meta":
            if self._abstract_fn is None:
                fn_name = getattr(self._init_fn, "__name__", self._name)
                raise RuntimeError(f"There was no fake impl registered for {self}. This is "
                                   "necessary for torch.compile/export/fx tracing to work. Please "
                                   f"use `{fn_name}.register_fake` to add an fake impl.")
            return self._abstract_fn
        fn = self._backend_fns.get(None)
        if fn is None:
            raise NotImplementedError(f"Could not run '{self._qualname}' with arguments from the "
                                      f"'{kind}' backend: its kernels are registered for "
                                      f"{sorted(k for k in self._backend_fns if k)} (use "
                                      "register_kernel to add one)")
        return fn

    def _run_kernel(self, pos, kw):
        fn = self._kernel_for(pos)
        pos = [_detached(v) for v in pos]
        result = fn(*pos, **{k: _detached(v) for k, v in kw.items()})
        self._check_result(fn, pos, result)
        for a, v in zip(self._parsed.args, pos):
            if a.mutated:
                for t in _binding.tensors_of([v]):
                    bump(t)
        for name, v in kw.items():
            if name in self._parsed.mutated:
                for t in _binding.tensors_of([v]):
                    bump(t)
        return result

    def _check_result(self, fn, pos, result):
        outs = _binding.tensors_of([result] if isinstance(result, Tensor) else
                                   result if isinstance(result, (list, tuple)) else [])
        roots = [t._whole_storage() for t in _binding.tensors_of(pos)]
        out_roots = [o._whole_storage() for o in outs]
        for i, r in enumerate(out_roots):
            if any(r is x for x in roots) or any(r is x for x in out_roots[:i]):
                raise RuntimeError(
                    f"{self._name} (with implementation in {inspect.getmodule(fn)}): The output "
                    "of this custom operator (1) must not also be an input to this custom "
                    "operator and (2) may not alias any inputs to this custom operator or other "
                    "returns. The most common way to trigger this error is if we have y = "
                    "custom_op(x) and y and x are the same Tensor. Please instead return a clone "
                    "of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                    "custom operator to not return y.")


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap `fn` (type-annotated) into the custom op `name` ("namespace::opname")."""
    def inner(fn):
        if schema is None:
            schema_str = infer_schema(fn, mutates_args=mutates_args)
        else:
            schema_str = schema
        namespace, opname = check_name(name)
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = set(result._parsed.mutated)
            if expected != set(() if mutates_args == "unknown" else mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}which "
                    "is different from what was provided to us in `mutates_args`. Please make "
                    "these consistent.")
        result.register_kernel(device_types)(fn)
        return result
    return inner if fn is None else inner(fn)


def resolve(op, api):
    """A CustomOpDef from itself, its torch.ops entry or its qualname."""
    if isinstance(op, CustomOpDef):
        return op
    opdef = getattr(op, "_opdef", None)
    if opdef is not None:
        return opdef
    if isinstance(op, str) and op in OPDEFS:
        return OPDEFS[op]
    raise ValueError(f"{api}({op!r}): expected a custom op (made by torch.library.custom_op), "
                     "its torch.ops entry or its 'namespace::name'; ops defined otherwise are "
                     "not supported here")
