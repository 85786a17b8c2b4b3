"""Schemas of custom ops: inferred from type annotations as PyTorch's `infer_schema` does
(same strings, same ValueErrors), and parsed back into arguments the call binds against."""
from __future__ import annotations

import collections.abc
import inspect
import re
import typing
from dataclasses import dataclass
from types import GenericAlias

from .._device import device
from .._dtype import dtype
from .._tensor import Tensor

_NO_DEFAULT = object()


def _derived(base, name, lists, opt_lists, list_opt):
    seqs = lambda t: (typing.Sequence[t], typing.List[t],  # noqa: E731,UP006
                      GenericAlias(collections.abc.Sequence, (t,)), GenericAlias(list, (t,)))
    out = [(base, name), (typing.Optional[base], f"{name}?")]
    if lists:
        out += [(s, f"{name}[]") for s in seqs(base)]
    if opt_lists:
        out += [(s, f"{name}?[]") for s in seqs(typing.Optional[base])]
    if list_opt:
        out += [(typing.Optional[s], f"{name}[]?") for s in seqs(base)]
    return out


PARAM_TYPES = dict(sum((_derived(*row) for row in (
    (Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
    (float, "float", True, False, True), (bool, "bool", True, False, True),
    (str, "str", False, False, False), (typing.Union[int, float, bool], "Scalar", True, False, False),
    (dtype, "ScalarType", False, False, False), (device, "Device", False, False, False))), []))
RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa: UP006
                int: "SymInt", float: "float", bool: "bool",
                typing.Union[int, float, bool]: "Scalar"}


def _annotation(ann, fn, error):
    if isinstance(ann, str):            # `from __future__ import annotations`
        try:
            return eval(ann, fn.__globals__)  # noqa: S307  (PyTorch evaluates them the same way)
        except Exception as e:
            error(f"Unsupported type annotation {ann}. It is not a type. ({type(e).__name__}: {e})")
    return ann


def _default_repr(value, name, error):
    if value is None or isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, (str, device)):
        return f'"{value}"'
    if isinstance(value, dtype):
        return str(value).split(".", 1)[1]
    error(f"Parameter {name} has an unsupported default value type {type(value)}. "
          "Please file an issue on GitHub so we can prioritize this.")


def _return(ann, error):
    if ann is None:
        return "()"
    if ann is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    if typing.get_origin(ann) is not tuple:
        if ann not in RETURN_TYPES:
            error(f"Return has unsupported type {ann}. The valid types are: {RETURN_TYPES}.")
        return RETURN_TYPES[ann]
    args = typing.get_args(ann)
    for a in args:
        if a not in RETURN_TYPES:
            error(f"Return has unsupported type {ann}. The valid types are: {RETURN_TYPES}.")
    joined = ", ".join(RETURN_TYPES[a] for a in args)
    return f"(({joined}))" if len(args) == 1 else f"({joined})"


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The schema string of a function from its type annotations (torch.library.infer_schema)."""
    sig = inspect.signature(prototype_function)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if isinstance(mutates_args, str):
        if mutates_args != "unknown":
            raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                             "that are mutated or the string 'unknown'. ")
    else:
        mutates_args = tuple(mutates_args)
    params, seen, kw_only = [], set(), False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not kw_only:
            params.append("*")
            kw_only = True
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = _annotation(p.annotation, prototype_function, error)
        if ann not in PARAM_TYPES:
            if typing.get_origin(ann) is tuple:
                error(f"Parameter {name} has unsupported type {p.annotation}. We do not support "
                      "Tuple inputs in schema. As a workaround, please try to use List instead. "
                      f"\n\nThe valid types are: {PARAM_TYPES.keys()}.")
            error(f"Parameter {name} has unsupported type {p.annotation}. "
                  f"The valid types are: {PARAM_TYPES.keys()}.")
        ty = PARAM_TYPES[ann]
        if mutates_args == "unknown" or name in mutates_args:
            if ty.startswith("Tensor"):
                ty = f"Tensor(a{idx}!){ty[len('Tensor'):]}"
            elif mutates_args != "unknown":
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of "
                      "Tensors can be mutated")
        seen.add(name)
        if p.default is inspect.Parameter.empty:
            params.append(f"{ty} {name}")
        else:
            params.append(f"{ty} {name}={_default_repr(p.default, name, error)}")
    if mutates_args != "unknown" and set(mutates_args) - seen:
        error(f"{set(mutates_args) - seen} in mutates_args were not found in the custom op's "
              "signature. mutates_args should contain the names of all args that the custom op "
              "mutates, or just the string 'unknown' if you don't know.")
    ret = _return(_annotation(sig.return_annotation, prototype_function, error), error)
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


# ---- parsing a schema string back into arguments -------------------------------------

@dataclass(frozen=True)
class Arg:
    name: str
    type: str                 # without the alias annotation: "Tensor", "SymInt[]", "Tensor?"
    default: object           # the Python value, or _NO_DEFAULT
    kw_only: bool
    mutated: bool


@dataclass(frozen=True)
class Schema:
    args: tuple
    returns: tuple            # return type strings; () for none

    @property
    def mutated(self):
        return tuple(a.name for a in self.args if a.mutated)


_ARG = re.compile(r"^(?P<ty>[A-Za-z]+)(?P<alias>\([a-z0-9]+!?\))?(?P<suffix>(\?|\[\d*\])*)\s+"
                  r"(?P<name>[A-Za-z_]\w*)(\s*=\s*(?P<default>.+))?$")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


def _parse_default(text, ty):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith('"') or text.startswith("'"):
        return text[1:-1]
    if ty.startswith("ScalarType"):
        from .. import _dtype
        return getattr(_dtype, text)
    if text.startswith("["):
        return [_parse_default(t, ty) for t in _split_top(text[1:-1])]
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_schema(text):
    """`[name](Tensor x, *, int n=2) -> Tensor` into a Schema; RuntimeError on bad text,
    as PyTorch's schema parser."""
    m = re.match(r"^\s*(?:[\w.:]*)\s*\((?P<args>.*)\)\s*->\s*(?P<ret>.+?)\s*$", text, re.S)
    if not m:
        raise RuntimeError(f"Schema could not be parsed (expected '(args) -> returns'): {text}")
    args, kw_only = [], False
    for part in _split_top(m.group("args")):
        if part == "*":
            kw_only = True
            continue
        a = _ARG.match(part)
        if not a:
            raise RuntimeError(f"Unknown argument in schema: {part!r} in {text}")
        ty = a.group("ty") + a.group("suffix")
        ty = {"int": "SymInt"}.get(ty, ty.replace("int[", "SymInt[").replace("int?", "SymInt?"))
        default = (_parse_default(a.group("default"), ty) if a.group("default") is not None
                   else _NO_DEFAULT)
        args.append(Arg(a.group("name"), ty, default, kw_only,
                        bool(a.group("alias") and a.group("alias").endswith("!)"))))
    ret = m.group("ret").strip()
    if ret.startswith("(") and ret.endswith(")"):
        inner = ret[1:-1].strip()
        inner = inner[1:-1] if inner.startswith("(") and inner.endswith(")") else inner
        rets = tuple(re.sub(r"\(.*?\)", "", r).split()[0] for r in _split_top(inner))
    else:
        rets = (re.sub(r"\([a-z0-9]+!?\)", "", ret).split()[0],)
    return Schema(tuple(args), rets)


def check_name(name):
    """`namespace::opname[.overload]` -> (namespace, opname); PyTorch's exception classes."""
    namespace, opname = name.split("::")        # ValueError as PyTorch's for a wrong count
    for part in (namespace, *opname.split(".", 1)):
        if not _IDENT.fullmatch(part):
            raise RuntimeError(f"expected an identifier in the op name {name!r}, found {part!r} "
                               "(names are 'namespace::opname' of letters, digits and '_')")
    if opname.endswith(".default"):
        raise RuntimeError("default is not a legal overload name for aten operators")
    return namespace, opname
