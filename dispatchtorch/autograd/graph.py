"""Graph nodes. Ops create them (when recording); the engine walks them.

A node holds its derivative rule, the values the rule asked for by name, and one
edge per differentiable input: the input's own node, or the leaf tensor itself.
"""
from __future__ import annotations

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class Node:
    """A recorded op (PyTorch's grad_fn)."""

    __slots__ = ("op_name", "rule", "saved", "versions", "next", "in_meta", "n_out",
                 "pre_hooks", "hooks", "retains", "outsaved", "__weakref__")

    def __init__(self, op_name, rule, saved, versions, next_edges, in_meta, n_out=1):
        self.op_name = op_name
        self.rule = rule
        self.saved = saved            # values in the rule's argument order
        self.versions = versions      # ((position in saved, tensor version at save), ...)
        self.next = next_edges        # per input: (Node, out_nr) | (leaf Tensor, 0) | None
        self.in_meta = in_meta        # per input: (shape, dtype) the grad must have
        self.n_out = n_out
        self.pre_hooks = None         # {out_nr: [fn]}: hooks of the non-leaf outputs
        self.hooks = None             # [fn(grad_inputs, grad_outputs)]
        self.retains = None           # {out_nr: weakref to a tensor with retain_grad()}
        self.outsaved = ()            # ((position in saved, out_nr), ...): saved outputs

    def name(self):
        return f"{self.op_name[:1].upper()}{self.op_name[1:]}Backward0"

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else
                     (e[0] if isinstance(e[0], Node) else AccumulateGrad(e[0]), e[1])
                     for e in self.next)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node ran; may return new grad_inputs."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return _Removable(self.hooks, fn)

    def register_prehook(self, fn):
        return self.add_output_hook(0, fn)

    def add_output_hook(self, out_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        hooks = self.pre_hooks.setdefault(out_nr, [])
        hooks.append(fn)
        return _Removable(hooks, fn)

    def unpack_saved(self, retain):
        """The saved values, checked against in-place changes; freed unless retained."""
        saved = self.saved
        if saved is FREED:
            raise RuntimeError(_FREED)
        for pos, version in self.versions:
            t = saved[pos]
            if t._vcount[0] != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.dtype} {list(t.shape)}], which is used by "
                    f"{self.name()}, is at version {t._vcount[0]}; expected version {version} "
                    f"instead. Hint: the op that saved it is {self.op_name}.")
        for pos, nr in self.outsaved:
            # saved outputs are kept without their grad_fn (no reference cycle); give it
            # back now so that a double backward can differentiate through them
            alias = saved[pos]
            alias._grad_fn, alias._out_nr, alias._rg = self, nr, True
        if not retain and saved:
            self.saved = FREED
        return saved


FREED = ("<freed>",)   # what saved values become after a backward without retain_graph


class AccumulateGrad:
    """What next_functions shows for a leaf, as in PyTorch."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


class _Removable:
    """The handle returned by register_hook: `.remove()` unregisters."""

    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self):
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def leaves_reached(roots, stop=()):
    """The leaf tensors whose gradients the autograd history of `roots` (nodes, or
    leaf tensors themselves) reaches, each once, walking no node whose id is in `stop`
    (the histories that are not the caller's to look into)."""
    seen, stack, leaves = set(stop), list(roots), []
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, Node):
            stack.extend(e[0] for e in x.next if e is not None)
        else:
            leaves.append(x)
    return leaves
