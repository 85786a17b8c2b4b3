"""functional_call: run a module with some parameters and buffers swapped for given
tensors (for torch.func-style code), restoring them afterwards."""
from __future__ import annotations

import contextlib

__all__ = ["functional_call"]


def _owner(module, name):
    path, _, leaf = name.rpartition(".")
    return module.get_submodule(path), leaf


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights=True, strict=False):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:       # a tensor given for one name also replaces the names tied to it
        by_id = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        extra = {}
        for name, value in tensors.items():
            if name in named:
                for other in by_id[id(named[name])]:
                    if other != name and other not in tensors:
                        extra[other] = value
        tensors = {**tensors, **extra}
    if strict:
        missing = sorted(set(named) - set(tensors))
        unexpected = sorted(set(tensors) - set(named))
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                msg.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for " + module._get_name() + ":\n\t"
                               + "\n\t".join(msg))
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            for store in ("_parameters", "_buffers"):
                d = owner.__dict__[store]
                if leaf in d:
                    saved.append((d, leaf, d[leaf]))
                    d[leaf] = value
                    break
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = value
        yield
    finally:
        for d, leaf, old in reversed(saved):
            if old is _MISSING:
                d.pop(leaf, None)
            else:
                d[leaf] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    else:
        tensors = {}
        for d in parameter_and_buffer_dicts:
            overlap = set(tensors) & set(d)
            if overlap:
                raise ValueError(f"{sorted(overlap)} appeared in multiple dictionaries; behavior "
                                 f"of functional call is ambiguous")
            tensors.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))
