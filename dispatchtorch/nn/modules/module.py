"""nn.Module: the base of every layer, with PyTorch's registration, traversal,
state_dict, device/dtype conversion and hook behaviour."""
from __future__ import annotations

from collections import OrderedDict, namedtuple

from ... import _dtype as D
from ... import __future__ as _future
from ..._tensor import Tensor
from ..._zero_grad import zero_grads
from ...autograd.grad_mode import no_grad
from ...ops.memory import _parse_to
from ...utils.hooks import RemovableHandle
from ...utils.swap import prepared, swap_tensors
from ..parameter import Buffer, Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _load_by_swap(param, value, assign):
    """load_state_dict under torch.__future__'s swap switch: param.module_load(value)
    swapped into param (the object stays; a Parameter stays a Parameter)."""
    new = param.module_load(value, assign=assign)
    if new is value or new is param:
        raise RuntimeError("module_load returned one of self or other, please .detach() the "
                           "result if returning one of the inputs in module_load")
    if isinstance(param, Parameter):
        if not isinstance(new, Parameter):
            new = Parameter(new, requires_grad=param.requires_grad)
        else:
            new.requires_grad_(param.requires_grad)
    swap_tensors(param, new)


_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_GLOBAL_HOOKS_ON = [False]          # one check on the call path while none is registered


def _global_handle(store, hook):
    handle = RemovableHandle(store)
    store[handle.id] = hook
    _GLOBAL_HOOKS_ON[0] = True
    return handle


def register_module_forward_pre_hook(hook):
    """A forward pre-hook for every module (before each module's own)."""
    return _global_handle(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, always_call=False):
    """A forward hook for every module (before each module's own)."""
    return _global_handle(_global_forward_hooks, hook)


def register_module_full_backward_hook(hook):
    """A full backward hook for every module."""
    return _global_handle(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """The deprecated global backward hook; it runs as a full backward hook."""
    return _global_handle(_global_backward_hooks, hook)


_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()


def register_module_full_backward_pre_hook(hook):
    """A full backward pre-hook for every module."""
    return _global_handle(_global_backward_pre_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> None or a replacement, on every register_parameter."""
    handle = RemovableHandle(_global_parameter_registration_hooks)
    _global_parameter_registration_hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> None or a replacement, on every register_buffer."""
    handle = RemovableHandle(_global_buffer_registration_hooks)
    _global_buffer_registration_hooks[handle.id] = hook
    return handle


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> None or a replacement, on every add_module."""
    handle = RemovableHandle(_global_module_registration_hooks)
    _global_module_registration_hooks[handle.id] = hook
    return handle


def _registered(hooks, module, name, value):
    for hook in hooks.values():
        r = hook(module, name, value)
        if r is not None:
            value = r
    return value


class Module:
    """Base class of all layers. Subclasses set attributes in __init__ (after calling
    super().__init__()) and define forward()."""

    training: bool
    _version = 1
    dump_patches = False
    call_super_init = False
    _call_hooks = False         # set once a call hook is registered: one check per call

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None

    def forward(self, *input):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  f"\"forward\" function")

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._call_hooks or _GLOBAL_HOOKS_ON[0]:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        return self.__call__(*args, **kwargs)

    _wrapped_call_impl = _call_impl

    def _call_with_hooks(self, args, kwargs):
        pre_hooks = list(_global_forward_pre_hooks.items()) + list(self._forward_pre_hooks.items())
        post_hooks = list(_global_forward_hooks.items()) + list(self._forward_hooks.items())
        for hid, hook in pre_hooks:
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {r}.")
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or \
                _global_backward_pre_hooks:
            from ._backward_hooks import BackwardHook
            bw = BackwardHook(self, list(_global_backward_hooks.values()) +
                              list(self._backward_hooks.values()),
                              list(_global_backward_pre_hooks.values()) +
                              list(self._backward_pre_hooks.values()))
            args = bw.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hid, hook in post_hooks:
                if hid in self._forward_hooks_always_called:
                    hook(self, args, None)
            raise
        for hid, hook in post_hooks:
            if hid in self._forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        if bw is not None:
            result = bw.setup_output_hook(result)
        return result

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input."""
        self.__dict__["_call_hooks"] = True
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output."""
        self.__dict__["_call_hooks"] = True
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The deprecated form; it runs as a full backward hook (PyTorch's old hook saw
        only the last op's gradients, a behaviour it warns about)."""
        self.__dict__["_call_hooks"] = True
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        self.__dict__["_is_full_backward_hook"] = False
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        self.__dict__["_call_hooks"] = True
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        self.__dict__["_call_hooks"] = True
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # -- attribute registration ------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            params[name] = value
            return
        if params is not None and name in params:
            if value is not None and not isinstance(value, Parameter):
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            params[name] = value
            return
        if isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
            return
        modules = d.get("_modules")
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                f"(torch.nn.Module or None expected)")
            modules[name] = value
            return
        if isinstance(value, Buffer):
            self._forget(name)
            self.register_buffer(name, value, persistent=value.persistent)
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(torch.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name, keep=None):
        """Drop name from every store but `keep` (a reassignment keeps its place in
        registration order, as in PyTorch)."""
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and store != keep:
                s.pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d[store]:
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if hasattr(self, name) and name not in self._parameters and name not in self._buffers \
                and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            f"(torch.nn.Parameter or None required)")
        if _global_parameter_registration_hooks:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._forget(name, keep="_parameters")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            f"(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = tensor.detach()
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._forget(name, keep="_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._forget(name, keep="_modules")
        self._modules[name] = module

    register_module = add_module

    def set_submodule(self, target, module, strict=False):
        """Replace (or with strict=False, add) the submodule at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        if strict and name not in parent._modules:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if name in parent.__dict__ and name not in parent._modules:
            raise AttributeError(f"`{name}` is not an nn.Module")
        parent.add_module(name, module)

    def get_extra_state(self):
        """Override (with set_extra_state) to keep non-tensor state in state_dict()."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def get_submodule(self, target):
        mod = self
        for item in target.split(".") if target else ():
            sub = mod._modules.get(item)
            if sub is None:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = sub
        return mod

    def get_parameter(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    def get_buffer(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # -- traversal ---------------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, v in mod.__dict__[store].items():
                if v is None:
                    continue
                if remove_duplicate:
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients ---------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- conversion ------------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by fn(data). By default the
        Parameter objects and their .grad objects stay (so optimizers built before `.to()`
        still hold them); torch.__future__'s switches make it assign new Parameters
        (overwrite) or exchange contents with swap_tensors (swap), as PyTorch 2.13."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        if _future.get_swap_module_params_on_conversion():
            self._apply_by_swap(fn)
        else:
            self._apply_by_data(fn)
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def _apply_by_data(self, fn):
        """_apply without the swap switch: `.data =` into the same Parameter (and .grad)
        objects, or new Parameters under the overwrite switch (PyTorch's rules)."""
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            set_data = (param.layout == applied.layout
                        and not _future.get_overwrite_module_params_on_conversion())
            grad = param._grad
            if set_data:
                if applied is not param:
                    param.data = applied
                out = param
            else:
                if not isinstance(param, Parameter):
                    raise AssertionError("param must be a Parameter")
                if not param.is_leaf:
                    raise AssertionError("param must be a leaf tensor")
                out = Parameter(applied, param.requires_grad)
                self._parameters[key] = out
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if set_data and grad.layout == grad_applied.layout:
                    if grad_applied is not grad:
                        out.grad.data = grad_applied
                else:
                    if not grad.is_leaf:
                        raise AssertionError("param_grad must be a leaf tensor")
                    out.grad = grad_applied.requires_grad_(grad.requires_grad)

    def _apply_by_swap(self, fn):
        """_apply under torch.__future__'s swap switch: each parameter, then its .grad,
        exchanges contents with its converted value (PyTorch's order and errors), with
        what holds them found by one heap scan for the module (utils/swap.py)."""
        keys = [k for k in self._parameters if self._parameters[k] is not None]
        params = [self._parameters[k] for k in keys]   # lists: not looked into as holders
        grads = [p._grad for p in params]
        with no_grad():
            new = [fn(p) for p in params]
            new_grads = [None if g is None else fn(g) for g in grads]
        for p, g in zip(params, grads):
            if g is not None:
                p.grad = None           # its holder would count against the swap
        new = [Parameter(n, requires_grad=p.requires_grad) for n, p in zip(new, params)]
        for ng, g in zip(new_grads, grads):
            if ng is not None:
                ng.requires_grad_(g.requires_grad)
        swap = prepared(params + new + [g for g in grads + new_grads if g is not None])
        for i, key in enumerate(keys):
            try:
                swap(params[i], new[i])
            except Exception as exc:
                for p, g in zip(params[i:], grads[i:]):     # not swapped: as they were
                    if g is not None:
                        p.grad = g
                raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") \
                    from exc
            if grads[i] is not None:
                try:
                    swap(grads[i], new_grads[i])
                except Exception as exc:
                    raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}"
                                       f".grad") from exc
                params[i].grad = grads[i]

    def to(self, *args, **kwargs):
        device, dtype, _ = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")

        memory_format = kwargs.get("memory_format")

        def convert(t):
            if dtype is not None and t.dtype.is_floating_point:
                t = t.to(device=device, dtype=dtype) if device is not None else t.to(dtype)
            elif device is not None:
                t = t.to(device)
            if memory_format is not None and t.dim() in (4, 5):     # as PyTorch's
                t = t.to(memory_format=memory_format)
            return t
        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def to_empty(self, *, device, recurse=True):
        """Move to device without copying values (parameters' contents are undefined)."""
        from ... import ops as _ops
        return self._apply(lambda t: _ops.empty_like(t, device=device), recurse)

    def share_memory(self):
        """Every parameter, gradient and buffer moved to memory shared with the processes
        it is sent to or forked into (Tensor.share_memory_: cpu only), for Hogwild-style
        training with any start method."""
        return self._apply(lambda t: t.share_memory_())

    def xpu(self, device=None):
        return self._apply(lambda t: t.to("xpu" if device is None else f"xpu:{device}"))

    def ipu(self, device=None):
        return self._apply(lambda t: t.to("ipu" if device is None else f"ipu:{device}"))

    def mtia(self, device=None):
        return self._apply(lambda t: t.to("mtia" if device is None else f"mtia:{device}"))

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def _cast_floats(self, dt):
        return self._apply(lambda t: t.to(dt) if t.dtype.is_floating_point else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    # -- state dict ------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:        # the deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, {})
            if r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False):
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent_buffers_set)
        swap = _future.get_swap_module_params_on_conversion()
        for name in list(local):                # no (name, param) pair: see _apply
            param = local[name]
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f"While copying the parameter named \"{key}\", expected "
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            try:
                with no_grad():
                    if swap:
                        _load_by_swap(param, value, assign)
                    elif assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as exc:
                error_msgs.append(f"While {'swapping' if swap else 'copying'} the parameter named "
                                  f"\"{key}\", whose dimensions "
                                  f"in the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : "
                                  f"{exc.args}.")
        extra = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        if strict:
            for key in state_dict:
                if has_extra and key == extra:
                    continue
                if key.startswith(prefix):
                    rest = key[len(prefix):]
                    head = rest.split(".", 1)[0]
                    if "." in rest:
                        if head not in self._modules:
                            unexpected_keys.append(key)
                    elif rest not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, prefix=""):
            for hook, with_module in module._load_state_dict_pre_hooks.values():
                args = (state_dict, prefix, {}, strict, missing, unexpected, errors)
                hook(module, *args) if with_module else hook(*args)
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected,
                                         errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, _IncompatibleKeys(missing, unexpected))

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata), after the module's entries."""
        def post(module, destination, prefix, local_metadata):
            hook(module, destination, prefix, local_metadata)
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = post
        return handle

    def _register_state_dict_hook(self, hook):
        """The private form, whose hook may return a new state dict."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (hook, with_module)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs), before the module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # -- printing ---------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, m in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__) | set(self._parameters) | \
            set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[:1].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled before these stores existed
        for store in ("_state_dict_hooks", "_load_state_dict_pre_hooks", "_backward_hooks",
                      "_backward_pre_hooks"):
            self.__dict__.setdefault(store, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)
        self.__dict__["_call_hooks"] = bool(
            self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or
            self._backward_pre_hooks)

    def __getstate__(self):
        return self.__dict__.copy()
